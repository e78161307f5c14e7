"""The plan pipeline's search space: four guarded steps over one problem.

`PlanSpace` is a `StepSpace` that also remembers each path's parsed outputs (so a
node's state is the tuple (A, R, S, P) of the four outputs, as a dict). Each request's
JSON Schema carries the constraints its step's guards declare (guards/constraints.py):
the strategy's order and the plan's actions may only use the actions recon found. A
recon that missed an action thus shows up downstream, and the feedback heuristic can
send the search back to it. Everything else that steers is the framework's: the
engine's Schedule (temperature and seed of each attempt), repeats dropped before any
guard, and the guards' repair patches applied without a model call.

A *free task* (`problem=None`: only the task's text) runs the same four steps on
prompts of their own (`plan_free_*.j2`) that ask for lower_snake_case names instead of
listing the problem's; with no facts or actions to judge against, only the guards
that need no problem spec run: the step guards and the Minimal plan guard.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pydantic import ValidationError

from guardsearch.apps.plan.fixes import upstream_advice
from guardsearch.apps.plan.guards import MediumPlanGuard, MinimalPlanGuard, plan_guard
from guardsearch.apps.plan.plan_format import (
    Plan,
    complete_plan,
    free_generation_schema,
    generation_schema,
)
from guardsearch.apps.plan.problems import PlanProblem
from guardsearch.apps.plan.step_guards import (
    AnalysisGuard,
    ReconGuard,
    StrategyGuard,
    analysis_schema,
    recon_actions,
    recon_schema,
    strategy_schema,
)
from guardsearch.apps.plan.task_checks import drop_copied_steps
from guardsearch.apps.plan.task_guards import TaskPlanGuard
from guardsearch.apps.plan.task_spec import TaskSpec
from guardsearch.apps.plan.traces import MAX_EXPLORATIONS
from guardsearch.core.budget import StepBudget
from guardsearch.core.context import Context
from guardsearch.core.digest import canonical_json
from guardsearch.core.errors import ConfigError
from guardsearch.core.guard_result import Check, GuardResult
from guardsearch.core.messages import ModelRequest
from guardsearch.guards.constraints import compile_constraints, declared_constraints
from guardsearch.guards.parse import parse_json
from guardsearch.prompts import PromptTemplate
from guardsearch.search.node import Node
from guardsearch.search.pipeline import StepSpace
from guardsearch.search.space import Proposal
from guardsearch.search.summary import failure_summary
from guardsearch.steps.step import Step

STEP_NAMES: tuple[str, ...] = ("analysis", "recon", "strategy", "plan")
# Each level's rmax and backtrack budget (docs/plan.md, docs/search.md): B_max 42.
SEARCH_BUDGETS: dict[str, StepBudget] = {
    "analysis": StepBudget(rmax=2, backtrack_budget=1),
    "recon": StepBudget(rmax=2, backtrack_budget=2),
    "strategy": StepBudget(rmax=2, backtrack_budget=3),
    "plan": StepBudget(rmax=3, backtrack_budget=7),
}
# A free task's plan gets more attempts in place: its guard's feedback is about the plan's
# own steps (a constraint no step addresses, a repeat), which nothing upstream fixes (the
# recon list is advice there), so a regenerated recon or strategy mostly spends calls.
FREE_PLAN_RMAX = 5
MAX_TOKENS = {"analysis": 64, "recon": 96, "strategy": 128, "plan": 400}


FREE_TASK_NOTE = (
    "free task: no initial state, goal or actions to judge by, so the plan is judged by "
    "the minimal guard and the task's spec (concrete steps, no repeats, every constraint "
    "addressed, the stated order); medium and expansive need a problem (--problem ID or "
    "--problem-file FILE)"
)
MINIMAL_NOTE = (
    "free task with --guard-level minimal: only the minimal plan guard and the step guards "
    "ran, not the task's spec"
)


def free_objective(task: str, spec: TaskSpec | None = None) -> str:
    """A free task as the objective every step's prompt starts with: its text, then what
    its spec asks (each constraint, the stated order)."""
    text = " ".join(task.split())
    if not text:
        raise ConfigError("a free task needs its text")
    asks = f"\n{spec.describe()}" if spec is not None and spec.describe() else ""
    return (
        f"{text}{asks}\nNo facts or actions are given: name them yourself as short "
        "lower_snake_case names (like backup_taken or book_venue)."
    )


def parse_plan(problem: PlanProblem | None, text: str) -> Any:
    """The model's plan as JSON, each step's `pre`/`effects` filled in from its action."""
    value = parse_json(text)
    return complete_plan(problem, value) if problem is not None else value


# The three steps before the plan: each a JSON schema and a guard built from the problem.
_UPSTREAM: dict[str, tuple[Callable[[PlanProblem | None], Any], Callable[..., Any]]] = {
    "analysis": (analysis_schema, AnalysisGuard),
    "recon": (recon_schema, ReconGuard),
    "strategy": (strategy_schema, StrategyGuard),
}


def plan_step(
    name: str,
    problem: PlanProblem | None,
    guard_level: str = "expansive",
    max_explorations: int = MAX_EXPLORATIONS,
    structural_repairs: bool = True,
    spec: TaskSpec | None = None,
) -> Step:
    """One of the four guarded steps for `problem` (prompt file `plan_<name>.j2`), or for
    a free task (`problem=None`: `plan_free_<name>.j2`; guard level `task` judges the
    plan by `spec`, `minimal` by the Minimal guard alone)."""
    template = PromptTemplate.packaged(f"plan_{name}" if problem else f"plan_free_{name}")
    rmax = FREE_PLAN_RMAX if problem is None and name == "plan" else SEARCH_BUDGETS[name].rmax
    tokens = MAX_TOKENS[name]
    if name in _UPSTREAM:
        schema_of, guard_of = _UPSTREAM[name]
        # The free analysis and recon guards also read the task's spec.
        guard = guard_of(problem) if name == "strategy" else guard_of(problem, spec)
        return Step(
            name=name,
            prompt=template,
            schema=schema_of(problem),
            guard=guard,
            rmax=rmax,
            max_tokens=tokens,
        )
    if name == "plan":
        # No schema on the Step: the Minimal guard owns the structural check, so its
        # feedback ("missing required field", "retry_budget <= 0") reaches the heuristic.
        return Step(
            name=name,
            prompt=template,
            parser=partial(parse_plan, problem),
            guard=_plan_guard(problem, guard_level, max_explorations, structural_repairs, spec),
            rmax=rmax,
            max_tokens=tokens,
        )
    raise ConfigError(f"unknown plan step {name!r}; the steps are {', '.join(STEP_NAMES)}")


def _plan_guard(
    problem: PlanProblem | None,
    level: str,
    max_explorations: int,
    structural_repairs: bool,
    spec: TaskSpec | None,
) -> MinimalPlanGuard:
    if level == "task":
        return TaskPlanGuard(None, spec=spec or TaskSpec(), structural_repairs=structural_repairs)
    return plan_guard(
        problem, level, max_explorations=max_explorations, structural_repairs=structural_repairs
    )


def _free_budgets(
    budgets: dict[str, StepBudget], steps: Sequence[str], free: bool, plan_rmax: int | None
) -> dict[str, StepBudget]:
    """The steps' budgets; a free task's plan step gets `plan_rmax` attempts (default
    FREE_PLAN_RMAX)."""
    out = {s: b for s, b in budgets.items() if s in steps}
    if free and "plan" in out:
        out["plan"] = dataclasses.replace(out["plan"], rmax=plan_rmax or FREE_PLAN_RMAX)
    return out


@dataclass(kw_only=True)
class PlanSpace(StepSpace):
    """A StepSpace over `problem` (None: a free task) whose requests are narrowed by
    earlier outputs."""

    problem: PlanProblem | None
    spec: TaskSpec | None = None
    # A free plan's dropped copies by the repaired plan (canonical JSON): its verdict says so.
    _copies: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def build(
        cls,
        problem: PlanProblem | None,
        steps: Sequence[str] = STEP_NAMES,
        *,
        guard_level: str = "expansive",
        task: str | None = None,
        budgets: dict[str, StepBudget] | None = None,
        window: int | None = None,
        max_explorations: int = MAX_EXPLORATIONS,
        structural_repairs: bool = True,
        spec: TaskSpec | None = None,
        plan_rmax: int | None = None,
    ) -> PlanSpace:
        if problem is None:
            objective = Context(objective=free_objective(task or "", spec))
        else:
            objective = Context(objective=problem.describe(task))
        if window is not None:
            objective = dataclasses.replace(objective, window=window)
        return cls(
            objective=objective,
            steps=[
                plan_step(s, problem, guard_level, max_explorations, structural_repairs, spec)
                for s in steps
            ],
            budgets=_free_budgets(budgets or SEARCH_BUDGETS, steps, problem is None, plan_rmax),
            problem=problem,
            spec=spec,
        )

    def plan_schema(self, context: Context) -> dict[str, Any]:
        """The plan request's schema: the generation schema (the decisions only), with the
        constraints the plan guard declares compiled in (guards/constraints.py: the
        actions recon listed, when it ran)."""
        base = (
            generation_schema(self.problem)
            if self.problem is not None
            else free_generation_schema(
                costs=self.spec is not None and self.spec.budget is not None
            )
        )
        rule = self.steps[-1].rule
        declared = declared_constraints(rule, context) if rule is not None else []
        return compile_constraints(base, declared)[0] if declared else base

    def request(
        self, node: Node, context: Context, *, seed: int, temperature: float
    ) -> ModelRequest:
        # The upstream steps' schemas are their own with their guards' constraints
        # compiled in (Step.build_request); the plan step has no Step schema (its guard
        # owns the structural check), so its request gets the plan schema here. Seeds
        # and temperatures are the engine's Schedule's.
        request = super().request(node, context, seed=seed, temperature=temperature)
        if self.steps[node.depth].name != "plan":
            return request
        return dataclasses.replace(request, json_schema=self.plan_schema(context))

    def parse(self, node: Node, text: str) -> Sequence[Proposal]:
        values = dict(node.state) if isinstance(node.state, dict) else {}
        out = []
        for proposal in super().parse(node, text):
            if self.problem is None and self.steps[node.depth].name == "plan":
                proposal = self._without_copies(proposal)
            values[self.steps[node.depth].name] = proposal.value
            out.append(dataclasses.replace(proposal, state=dict(values)))
        return out

    def _without_copies(self, proposal: Proposal) -> Proposal:
        """A free plan without its word-for-word copied steps (task_checks.py), the notes
        kept for its verdict (`evaluate` adds them as the `repaired` check)."""
        value, notes = drop_copied_steps(proposal.value)
        if not notes:
            return proposal
        self._copies[canonical_json(value)] = notes
        return dataclasses.replace(proposal, value=value)

    async def evaluate(self, node: Node, proposal: Proposal, context: Context) -> GuardResult:
        verdict = await super().evaluate(node, proposal, context)
        notes = self._copies.get(canonical_json(proposal.value)) if self._copies else None
        if not notes:
            return verdict
        said = Check(name="repaired", passed=True, detail="; ".join(notes))
        return dataclasses.replace(verdict, checks=(*verdict.checks, said))

    def patched(self, node: Node, proposal: Proposal, value: Any) -> Proposal:
        # The state is the path's outputs by step: the repaired output replaces this one.
        repaired = super().patched(node, proposal, value)
        values = dict(proposal.state) if isinstance(proposal.state, dict) else {}
        values[self.steps[node.depth].name] = value
        return dataclasses.replace(repaired, state=values)

    def failure_summary(self, failed_step: str, verdict: GuardResult, path: Sequence[Node]) -> str:
        """The search's failure summary, plus what the regenerated step should change so that
        the failed plan's fix becomes possible (the downstream-failure channel: in the
        regenerated step's terms, never the plan's step ids)."""
        return failure_summary(
            failed_step,
            verdict.feedback or "failed",
            [(n.step, n.text) for n in path],
            self._advice(failed_step, path),
        )

    def _advice(self, failed_step: str, path: Sequence[Node]) -> str:
        if failed_step != "plan" or not path or self.problem is None:
            return ""
        guard = self.steps[-1].guard
        failed = path[-1]
        if not isinstance(guard, MediumPlanGuard) or failed.step != "plan":
            return ""
        try:
            plan = Plan.model_validate(failed.value)
        except ValidationError:
            return ""
        findings = guard.findings(plan)
        regenerated = path[0]
        listed = recon_actions(regenerated.value) if regenerated.step == "recon" else None
        return upstream_advice(findings, regenerated.step, listed)
