"""What an app supplies to the review loop: how to plan, act, verify and refine.

The loop (loop.py) owns the control flow, the budget checks, the history and the
escalation; an app owns the domain: its search spec, its tools, its verifier and
the mapping from rejection reasons to concrete refinements.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from guardsearch.core.source import Source
from guardsearch.loops.review.history import RefinementHistory
from guardsearch.loops.review.quality import Level, QualityReport, Refinement, Verdict
from guardsearch.loops.review.reflection import Reflection
from guardsearch.models.metered import Metered

SpecT = TypeVar("SpecT")


@dataclass(frozen=True, kw_only=True)
class Planned(Generic[SpecT]):
    """The plan phase's result: the reflection block, the domain and the first spec."""

    reflection: Reflection
    domain: str
    spec: SpecT


class ReviewTask(Protocol[SpecT]):
    async def plan(self, request: str, metered: Metered) -> Planned[SpecT]:
        """Reflect and write the first spec (model calls go through `metered`)."""
        ...

    async def act(self, spec: SpecT) -> list[Source]:
        """Run the tools for `spec`; no model calls."""
        ...

    async def verify(
        self, candidates: Sequence[Source], spec: SpecT, metered: Metered
    ) -> list[Verdict]:
        """Accept or reject each candidate with a reason (rules first, model second)."""
        ...

    def suggest(
        self,
        level: Level,
        report: QualityReport,
        verdicts: Sequence[Verdict],
        candidates: Sequence[Source],
        spec: SpecT,
        history: RefinementHistory,
    ) -> list[Refinement]:
        """Refinements at `level` for this report, best first (may be empty)."""
        ...

    def apply(self, spec: SpecT, refinement: Refinement) -> SpecT:
        """`spec` with a keyword or source refinement applied (no model calls)."""
        ...

    async def replan(
        self, request: str, spec: SpecT, reports: Sequence[QualityReport], metered: Metered
    ) -> SpecT:
        """A new spec written by the model from what went wrong so far."""
        ...

    def describe(self, spec: SpecT) -> dict[str, Any]:
        """The spec as JSON-ready data for reports and transcripts."""
        ...
