"""A small in-memory ReviewTask for loop tests (no corpus, no model of its own)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from guardsearch.core.context import Context
from guardsearch.core.source import Source
from guardsearch.loops.review import (
    Level,
    Planned,
    QualityReport,
    Refinement,
    RefinementHistory,
    Reflection,
    Verdict,
)
from guardsearch.models.metered import Metered
from guardsearch.steps.step import Step, run_step

REFLECTION = Reflection(
    plan="search, verify, refine",
    assumptions=["items are wanted"],
    risks=["noise"],
    success_criteria="3 verified items",
)


@dataclass
class ListTask:
    """Batches of candidates per spec; a candidate is good when its key starts 'good'.

    The spec is the set of applied refinement levels; `batches` maps a spec name to what
    act() returns. Verification asks the model once per candidate (a judge call).
    """

    batches: dict[str, list[str]]
    offer: dict[str, list[Refinement]] = field(default_factory=dict)
    replanned_to: str = "replanned"
    applied: list[str] = field(default_factory=list)
    judged: list[str] = field(default_factory=list)

    async def plan(self, request: str, metered: Metered) -> Planned[str]:
        step = Step(name="plan", prompt="plan it")
        await run_step(step, Context(objective=request), metered)
        return Planned(reflection=REFLECTION, domain="docs", spec="start")

    async def act(self, spec: str) -> list[Source]:
        return [Source(id=k, title=k) for k in self.batches[spec]]

    async def verify(
        self, candidates: Sequence[Source], spec: str, metered: Metered
    ) -> list[Verdict]:
        out = []
        for c in candidates:
            self.judged.append(c.key)
            await run_step(Step(name="judge", prompt="judge"), Context(objective="x"), metered)
            good = c.key.startswith("good")
            out.append(
                Verdict(key=c.key, accepted=good, reason="" if good else c.key.rstrip("0123456789"))
            )
        return out

    def suggest(
        self,
        level: Level,
        report: QualityReport,
        verdicts: Sequence[Verdict],
        candidates: Sequence[Source],
        spec: str,
        history: RefinementHistory,
    ) -> list[Refinement]:
        return list(self.offer.get(level, []))

    def apply(self, spec: str, refinement: Refinement) -> str:
        self.applied.append(refinement.level)
        return refinement.target

    async def replan(
        self, request: str, spec: str, reports: Sequence[QualityReport], metered: Metered
    ) -> str:
        self.applied.append("replan")
        await run_step(Step(name="replan", prompt="replan"), Context(objective=request), metered)
        return self.replanned_to

    def describe(self, spec: str) -> dict[str, Any]:
        return {"spec": spec}
