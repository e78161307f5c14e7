"""Plan guards at three levels (docs/plan.md): Minimal ⊂ Medium ⊂ Expansive.

- **Minimal**: parseable JSON, required fields, every step's `retry_budget` > 0, unique
  ids, known actions, `on_failure` naming a later step.
- **Medium**: declared preconditions/effects match the actions; every precondition is
  satisfied by the initial state or an earlier effect; the goal is reachable; the
  total retry budget is at most R_max.
- **Expansive**: explores every execution trace, failure branches included, up to
  MAX_EXPLORATIONS step executions, and reports dead ends where no path reaches the
  goal or the safe facts.

Only Minimal needs no problem. A plan may use the actions recon listed when recon ran
(a free task's, or a problem's), else the problem's; Minimal declares them as a
constraint (`constraint`), which the plan request's schema compiles in.
Medium and Expansive need the initial facts, the goal and the actions' preconditions
and effects, so they need a problem.

Their feedback strings are written for the backtrack heuristic's rule table:
"not parseable", "missing required field", "retry_budget <= 0" (retry the plan);
"not satisfiable", "unreachable", "exceeds R_max", "MAX_EXPLORATIONS" (back to the
strategy); "dead-end ... no path" (back to recon).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal

from pydantic import ValidationError

from guardsearch.apps.plan.fixes import (
    Finding,
    budget_finding,
    dead_end_finding,
    goal_finding,
    order_finding,
    unmet_finding,
)
from guardsearch.apps.plan.follow import follow_patch, strategy_order
from guardsearch.apps.plan.plan_format import Plan, complete_plan, plan_schema
from guardsearch.apps.plan.problems import PlanProblem
from guardsearch.apps.plan.repair import Patch, reorder_patch
from guardsearch.apps.plan.step_guards import earlier, recon_actions
from guardsearch.apps.plan.traces import MAX_EXPLORATIONS, explore, run_main_line
from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.errors import ConfigError, ParseError
from guardsearch.core.guard_result import Check, GuardResult
from guardsearch.guards.parse import parse_json
from guardsearch.guards.schema import SchemaGuard

Level = Literal["minimal", "medium", "expansive"]
LEVELS: tuple[Level, ...] = ("minimal", "medium", "expansive")
# A failure at a higher level means the plan got further: a better "best failed plan".
_SCORE = {"minimal": 0.0, "medium": 0.34, "expansive": 0.67}


def _set(values: Any) -> str:
    return "{" + ", ".join(sorted(values)) + "}"


@dataclass
class MinimalPlanGuard:
    """Structure: parseable, required fields, retry budgets > 0, a well-formed DAG.

    Steps that leave out `pre`/`effects` get their action's (`complete_plan`). With
    `problem=None` (a free task) the known actions are the ones recon listed, if any.
    `structural_repairs=False` keeps the fixes of a dead end, an over-budget plan, a step
    that can never run and steps left out of the strategy's order as feedback only (no
    patch; the reorder repair stays): an ablation, and the way to see the search route
    those failures."""

    problem: PlanProblem | None
    name: str = "plan-minimal"
    structural_repairs: bool = True
    level: ClassVar[Level] = "minimal"
    _schema: SchemaGuard = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._schema = SchemaGuard(plan_schema(), name=self.name)

    async def check(self, artifact: Artifact, context: Context) -> GuardResult:
        if artifact.parse_error is not None:
            return self._fail("minimal", [artifact.parse_error])
        value = artifact.value
        if value is None:
            try:
                value = parse_json(artifact.text)
            except ParseError as exc:
                return self._fail("minimal", [str(exc)])
        if self.problem is not None:
            value = complete_plan(self.problem, value)
        artifact = replace(artifact, value=value)
        verdict = await self._schema.check(artifact, context)
        if not verdict.passed:
            return self._fail("minimal", [verdict.feedback])
        try:
            plan = Plan.model_validate(artifact.value)
        except ValidationError as exc:  # pragma: no cover - the schema check comes first
            return self._fail("minimal", [f"schema violation: {exc.errors()[0]['msg']}"])
        problems = self.structure(plan, context)
        if problems:
            return self._repairable(self._fail("minimal", problems), plan)
        return self._repairable(await self.deeper(plan, context), plan)

    def _repairable(self, verdict: GuardResult, plan: Plan) -> GuardResult:
        """`verdict` with the reorder repair attached when some order of the plan's own
        steps meets every need (the step or search applies it and judges again); else the
        fix its first finding carries (a recovery step, lower retry budgets), if any."""
        if verdict.passed:
            return verdict
        patch = reorder_patch(self.problem, plan)
        return replace(verdict, patch=patch) if patch else verdict

    def known_actions(self, context: Context | None) -> tuple[tuple[str, ...], str] | None:
        """The actions a plan may use and whose they are: the ones recon listed when it
        ran (of the problem's, for a problem), else the problem's; None: any name."""
        found = recon_actions(earlier(context, "recon")) if context is not None else None
        if found and self.problem is not None:
            found = [a for a in found if self.problem.action(a) is not None]
        if found:
            return tuple(dict.fromkeys(found)), "the actions recon listed"
        if self.problem is not None:
            return self.problem.action_names, "the problem's actions"
        return None

    def constraint(self, context: Context) -> dict[str, Any] | None:
        """The known actions as a constraint on each step's `action` (compiled into the
        plan request's schema: a step naming another cannot be decoded)."""
        known = self.known_actions(context)
        if known is None:
            return None
        action = {"enum": list(known[0])}
        return {"properties": {"steps": {"items": {"properties": {"action": action}}}}}

    def structure(self, plan: Plan, context: Context | None = None) -> list[str]:
        found: list[str] = []
        ids = [s.id for s in plan.steps]
        for ident in sorted({i for i in ids if ids.count(i) > 1}):
            found.append(f"step id {ident} is used more than once")
        position = {s.id: i for i, s in enumerate(plan.steps)}
        known = self.known_actions(context)
        for i, step in enumerate(plan.steps):
            if step.retry_budget <= 0:
                found.append(f"step {step.id}: retry_budget <= 0 (each step needs >= 1 attempt)")
            if known is not None and step.action not in known[0]:
                found.append(
                    f"step {step.id}: action {step.action!r} is not one of {known[1]} "
                    f"({', '.join(known[0])})"
                )
            if step.on_failure is not None:
                target = position.get(step.on_failure)
                if target is None:
                    found.append(f"step {step.id}: on_failure names no step {step.on_failure!r}")
                elif target <= i:
                    found.append(order_finding(step, plan.steps[target]).feedback)
        return found

    async def deeper(self, plan: Plan, context: Context) -> GuardResult:
        return self._pass()

    def _fail(
        self, level: Level, problems: list[str] | list[Finding], patch: Patch | None = None
    ) -> GuardResult:
        checks = tuple(
            Check(name=lv, passed=LEVELS.index(lv) < LEVELS.index(level), hard=True)
            for lv in LEVELS[: LEVELS.index(level) + 1]
        )
        texts = [p.feedback if isinstance(p, Finding) else p for p in problems]
        # One finding's fix at a time: the engine judges the repaired plan again and takes
        # the next finding's fix from that verdict (patches of two findings could clash).
        # `patch`, when given, comes first (the plan's whole main line, following the
        # strategy).
        if patch is None:
            patch = next((p.patch for p in problems if isinstance(p, Finding) and p.patch), None)
        if not self.structural_repairs:
            patch = None
        return GuardResult(
            passed=False,
            feedback="; ".join(texts),
            score=_SCORE[level],
            checks=checks,
            guard=self.name,
            patch=patch,
        )

    def _pass(self) -> GuardResult:
        checks = tuple(
            Check(name=lv, passed=True, hard=True) for lv in LEVELS[: LEVELS.index(self.level) + 1]
        )
        return GuardResult(passed=True, score=1.0, checks=checks, guard=self.name)


@dataclass
class MediumPlanGuard(MinimalPlanGuard):
    """Minimal, then: honest steps, satisfiable preconditions, reachable goal, R_max."""

    name: str = "plan-medium"
    level: ClassVar[Level] = "medium"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.problem is None:
            raise ConfigError(
                f"the {self.level} plan guard needs a problem (initial facts, goal, actions); "
                "a free task gets the minimal guard"
            )

    @property
    def spec(self) -> PlanProblem:
        assert self.problem is not None  # __post_init__ checked it
        return self.problem

    def semantics(self, plan: Plan) -> list[Finding]:
        """What is wrong with the plan's meaning, each with its fix (empty: nothing)."""
        mismatched: list[Finding] = []
        for step in plan.steps:
            action = self.spec.action(step.action)
            assert action is not None  # Minimal checked it
            if set(step.pre) != set(action.pre) or set(step.effects) != set(action.effects):
                mismatched.append(
                    Finding(
                        f"step {step.id} ({step.action}): declared pre/effects differ from the "
                        f"action's (pre {_set(action.pre)}, effects {_set(action.effects)})"
                    )
                )
        if mismatched:  # the rest would judge a plan that means something else
            return mismatched
        found: list[Finding] = []
        line = run_main_line(self.spec, plan)
        for unmet in line.unmet:
            found.append(unmet_finding(self.spec, plan, unmet))
        if line.missing_goal:
            found.append(goal_finding(self.spec, plan, line.missing_goal))
        if plan.total_retry_budget > self.spec.r_max:
            found.append(budget_finding(self.spec, plan))
        return found

    def findings(self, plan: Plan) -> list[Finding]:
        """The Medium findings, else the Expansive ones: what the feedback of a plan that
        passed Minimal says, with what each fix needs upstream."""
        return self.semantics(plan)

    async def deeper(self, plan: Plan, context: Context) -> GuardResult:
        problems = self.semantics(plan)
        if problems:
            # A main line that left out steps of a runnable strategy gets them back.
            order = strategy_order(self.spec, context)
            return self._fail("medium", problems, follow_patch(self.spec, plan, order))
        return await self.deepest(plan)

    async def deepest(self, plan: Plan) -> GuardResult:
        return self._pass()


@dataclass
class ExpansivePlanGuard(MediumPlanGuard):
    """Medium, then: every execution trace, failure branches included, reaches the goal
    or the safe facts (explored up to `max_explorations` step executions)."""

    name: str = "plan-expansive"
    level: ClassVar[Level] = "expansive"
    max_explorations: int = MAX_EXPLORATIONS

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_explorations < 1:
            raise ConfigError(f"max_explorations must be >= 1, got {self.max_explorations}")

    def traces(self, plan: Plan) -> list[Finding]:
        """Dead ends (at most 3) or an exploration over the limit, each with its fix."""
        found = explore(self.spec, plan, self.max_explorations)
        if found.dead_ends:
            return [dead_end_finding(self.spec, plan, d) for d in found.dead_ends[:3]]
        if found.exceeded:
            return [
                Finding(
                    f"MAX_EXPLORATIONS exceeded: more than {self.max_explorations} step "
                    f"executions across the failure branches; simplify the plan"
                )
            ]
        return []

    def findings(self, plan: Plan) -> list[Finding]:
        return self.semantics(plan) or self.traces(plan)

    async def deepest(self, plan: Plan) -> GuardResult:
        found = self.traces(plan)
        return self._fail("expansive", found) if found else self._pass()


GUARDS: dict[str, type[MinimalPlanGuard]] = {
    "minimal": MinimalPlanGuard,
    "medium": MediumPlanGuard,
    "expansive": ExpansivePlanGuard,
}


def plan_guard(
    problem: PlanProblem | None,
    level: str = "expansive",
    *,
    max_explorations: int = MAX_EXPLORATIONS,
    structural_repairs: bool = True,
) -> MinimalPlanGuard:
    """The plan guard at `level` (minimal, medium or expansive) for `problem`; a free
    task (`problem=None`) can only have the minimal one (ConfigError otherwise)."""
    if level == "expansive":
        return ExpansivePlanGuard(
            problem, max_explorations=max_explorations, structural_repairs=structural_repairs
        )
    if level in GUARDS:
        return GUARDS[level](problem, structural_repairs=structural_repairs)
    raise ConfigError(f"unknown guard level {level!r}; choose one of {', '.join(LEVELS)}")
