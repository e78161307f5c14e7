"""Extension points of the inner/outer loop: the protocols run_adaptive plugs in, with defaults.

- `Planner` is the outer layer: plan, evaluate, replan (one model call each) and a
  fallback plan written by code (no default: the app brings it, e.g. apps/probe);
- `StrategySelector` picks the ProbePolicy for a plan (default: one policy for all);
- `FailureClassifier` names how an inner loop ended, which decides whether the outer
  planner replans (default: rule-based over the stop reason and the results);
- `TerminationPolicy` decides when the inner loop stops (default: stable, oscillation,
  plateau, budget; `MultiObjectiveTermination` also stops once the weighted score of
  the current results reaches a target).

Pass your own objects to run_adaptive to replace any of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from guardsearch.core.source import Source
from guardsearch.loops.inner_outer.budget import ControlBudget
from guardsearch.loops.inner_outer.plan import Evaluation, ProbePlan
from guardsearch.loops.inner_outer.policy import ProbePolicy, ProbeState
from guardsearch.models.metered import Metered


class Planner(Protocol):
    """The outer planner: plan, evaluate, replan, each one model call."""

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


class StrategySelector(Protocol):
    def select(self, plan: ProbePlan, budget: ControlBudget) -> ProbePolicy: ...


class FailureClassifier(Protocol):
    def classify(self, stop_reason: str, state: ProbeState) -> str:
        """A failure class: "ok", "no_results", "plateau", "oscillation", "budget", ..."""
        ...

    def wants_replan(self, failure: str) -> bool: ...


class TerminationPolicy(Protocol):
    def stop_reason(
        self, state: ProbeState, policy: ProbePolicy, budget: ControlBudget
    ) -> str | None: ...


@dataclass(frozen=True)
class SingleStrategy:
    """One policy for every plan (the simple case, and the default)."""

    policy: ProbePolicy

    def select(self, plan: ProbePlan, budget: ControlBudget) -> ProbePolicy:
        return self.policy


@dataclass(frozen=True)
class RuleClassifier:
    """Stable or oscillating with results is fine; a plateau or nothing found asks for a
    replan; running out of inner budget is accepted as it is."""

    replan_on: frozenset[str] = frozenset({"plateau", "no_results"})

    def classify(self, stop_reason: str, state: ProbeState) -> str:
        if not state.collected and not (state.last and state.last.hits):
            return "no_results"
        if stop_reason in ("stable", "objective_met"):
            return "ok"
        if stop_reason == "inner_budget":
            return "budget"
        return stop_reason

    def wants_replan(self, failure: str) -> bool:
        return failure in self.replan_on


@dataclass(frozen=True)
class DefaultTermination:
    plateau_steps: int = 3

    def stop_reason(
        self, state: ProbeState, policy: ProbePolicy, budget: ControlBudget
    ) -> str | None:
        if state.step > 0:
            if policy.is_stable(state):
                return "stable"
            if state.oscillating:
                return "oscillation"
            if state.stale_steps >= self.plateau_steps:
                return "plateau"
        return "inner_budget" if budget.inner_exhausted else None


@dataclass(frozen=True)
class MultiObjectiveTermination:
    """Stop once the best weighted fitness reaches `target`; otherwise as `fallback`."""

    target: float
    fallback: TerminationPolicy = DefaultTermination()

    def stop_reason(
        self, state: ProbeState, policy: ProbePolicy, budget: ControlBudget
    ) -> str | None:
        if state.step > 0 and state.best_fitness >= self.target:
            return "objective_met"
        return self.fallback.stop_reason(state, policy, budget)
