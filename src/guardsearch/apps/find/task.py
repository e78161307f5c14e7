"""FindTask: the `find` app as a ReviewTask (plan, act, verify, suggest, apply, replan)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from guardsearch.apps.find import refine
from guardsearch.apps.find.act import CorpusActor
from guardsearch.apps.find.spec import FindSpec, singular
from guardsearch.apps.find.steps import FindPlanDraft, ReplanDraft, plan_step, replan_step
from guardsearch.apps.find.verify import Verifier
from guardsearch.core.context import Context
from guardsearch.core.source import Source
from guardsearch.loops.review.history import RefinementHistory
from guardsearch.loops.review.quality import Level, QualityReport, Refinement, Verdict
from guardsearch.loops.review.task import Planned
from guardsearch.models.metered import Metered
from guardsearch.steps.step import run_step
from guardsearch.tools.base import SearchProvider


@dataclass
class FindTask:
    """Find items of one type matching a condition in a search provider's corpus."""

    provider: SearchProvider
    min_items: int = 3
    use_judge: bool = True
    k: int = 15
    request: str = ""
    tried: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.actor = CorpusActor(self.provider)
        self.verifier = Verifier(self.actor, self.use_judge)

    async def plan(self, request: str, metered: Metered) -> Planned[FindSpec]:
        self.request = request
        outcome = await run_step(
            plan_step(request),
            Context(objective=request),
            metered,
            variables={"request": request, "min_items": self.min_items},
        )
        draft = FindPlanDraft.model_validate(outcome.value)
        item_type = singular(draft.item_type.split()[-1])
        spec = FindSpec(
            item_type=item_type,
            qualifier=draft.qualifier.strip(),
            keywords=tuple(k.strip() for k in draft.keywords if k.strip()),
            k=self.k,
        )
        return Planned(reflection=draft.reflection, domain=draft.domain, spec=spec)

    async def act(self, spec: FindSpec) -> list[Source]:
        self.tried.append(spec.query)
        return await self.actor.candidates(spec)

    async def verify(
        self, candidates: Sequence[Source], spec: FindSpec, metered: Metered
    ) -> list[Verdict]:
        return await self.verifier.verify(candidates, spec, metered, self.request)

    def suggest(
        self,
        level: Level,
        report: QualityReport,
        verdicts: Sequence[Verdict],
        candidates: Sequence[Source],
        spec: FindSpec,
        history: RefinementHistory,
    ) -> list[Refinement]:
        return refine.suggest(level, report, verdicts, candidates, spec, self.request)

    def apply(self, spec: FindSpec, refinement: Refinement) -> FindSpec:
        return refine.apply(spec, refinement)

    async def replan(
        self, request: str, spec: FindSpec, reports: Sequence[QualityReport], metered: Metered
    ) -> FindSpec:
        lines = []
        for query, report in zip(self.tried, reports, strict=False):
            why = ", ".join(f"{r} {n}" for r, n in report.rejection_breakdown.items()) or "none"
            lines.append(f"- {query!r}: {report.verified}/{report.total_fetched} kept; {why}")
        outcome = await run_step(
            replan_step(self.tried, spec.item_type),
            Context(objective=request),
            metered,
            variables={"request": request, "history": "\n".join(lines)},
        )
        draft = ReplanDraft.model_validate(outcome.value)
        return spec.evolve(
            keywords=tuple(k.strip() for k in draft.keywords if k.strip()),
            positive=(),
            replans=spec.replans + 1,
        )

    def describe(self, spec: FindSpec) -> dict[str, Any]:
        return spec.as_dict()
