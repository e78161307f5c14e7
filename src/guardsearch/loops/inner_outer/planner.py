"""The outer planner protocol (seed 003): plan, evaluate, replan, each one model call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from guardsearch.core.source import Source
from guardsearch.loops.inner_outer.plan import Evaluation, ProbePlan
from guardsearch.loops.inner_outer.policy import ProbeState
from guardsearch.models.metered import Metered


class Planner(Protocol):
    async def plan(self, topic: str, metered: Metered) -> ProbePlan: ...

    async def evaluate(
        self, topic: str, results: Sequence[Source], metered: Metered
    ) -> Evaluation: ...

    async def replan(
        self, topic: str, plan: ProbePlan, state: ProbeState, failure: str, metered: Metered
    ) -> ProbePlan: ...

    def fallback(self, topic: str) -> ProbePlan:
        """A plan written by code when the model cannot plan (no budget, bad output)."""
        ...
