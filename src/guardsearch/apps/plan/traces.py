"""Executing a plan on paper: the main line, and every failure branch.

`run_main_line` plays the all-success trace and reports unmet preconditions and the
goal facts never produced. `explore` walks every execution trace, including each
risky step's failure branch, up to `max_explorations` step executions, and reports
dead ends: traces that end with neither the goal nor the safe facts holding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from guardsearch.apps.plan.plan_format import Plan, PlanStep
from guardsearch.apps.plan.problems import PlanProblem

MAX_EXPLORATIONS = 40


@dataclass(frozen=True)
class Unmet:
    """A main-line step whose preconditions do not hold when it runs."""

    step: str
    action: str
    missing: tuple[str, ...]


@dataclass(frozen=True)
class MainLine:
    unmet: tuple[Unmet, ...]
    missing_goal: tuple[str, ...]
    facts: frozenset[str]


def needs(problem: PlanProblem, step: PlanStep) -> set[str]:
    """What a step needs: the action's preconditions and any it declares."""
    action = problem.action(step.action)
    return set(step.pre) | (set(action.pre) if action else set())


def gives(problem: PlanProblem, step: PlanStep) -> set[str]:
    """What a step gives on success: the action's effects (the truth, not the claim)."""
    action = problem.action(step.action)
    return set(action.effects) if action else set()


def run_main_line(problem: PlanProblem, plan: Plan) -> MainLine:
    facts = set(problem.initial)
    unmet: list[Unmet] = []
    for step in plan.main_line():
        missing = needs(problem, step) - facts
        if missing:
            unmet.append(Unmet(step.id, step.action, tuple(sorted(missing))))
        facts |= gives(problem, step)
    return MainLine(
        unmet=tuple(unmet),
        missing_goal=tuple(g for g in problem.goal if g not in facts),
        facts=frozenset(facts),
    )


@dataclass(frozen=True)
class DeadEnd:
    """A failure branch that reaches neither the goal nor the safe facts."""

    after: str  # the step whose failure starts the branch
    action: str
    reason: str
    lost: tuple[str, ...] = ()  # safe facts the branch ends without
    recovery: str | None = None  # the recovery step that was tried, if any
    missing: tuple[str, ...] = ()  # what that recovery step needed and did not have


@dataclass
class Exploration:
    dead_ends: list[DeadEnd] = field(default_factory=list)
    explored: int = 0
    traces: int = 0
    exceeded: bool = False


class _Stop(Exception):
    pass


def explore(
    problem: PlanProblem, plan: Plan, max_explorations: int = MAX_EXPLORATIONS
) -> Exploration:
    """Walk every execution trace of `plan`; count step executions, collect dead ends."""
    out = Exploration()

    def visit() -> None:
        out.explored += 1
        if out.explored > max_explorations:
            out.exceeded = True
            raise _Stop

    def settled(facts: set[str]) -> bool:
        return set(problem.goal) <= facts or (bool(problem.safe) and set(problem.safe) <= facts)

    def fail(step: PlanStep, facts: set[str], seen: tuple[str, ...]) -> None:
        """`step` failed for good: follow its failure branch, if it has one."""
        action = problem.action(step.action)
        after = facts - set(action.loses if action else ())
        target = plan.by_id(step.on_failure) if step.on_failure else None
        if target is None or target.id in seen:
            out.traces += 1
            if not settled(after):
                lost = sorted(set(problem.safe) - after)
                why = f"lost {{{', '.join(lost)}}}" if lost else "goal not reached"
                out.dead_ends.append(
                    DeadEnd(step.id, step.action, why + ", no recovery step", tuple(lost))
                )
            return
        recover(target, after, step, (*seen, target.id))

    def recover(step: PlanStep, facts: set[str], origin: PlanStep, seen: tuple[str, ...]) -> None:
        visit()
        missing = needs(problem, step) - facts
        if missing:
            out.traces += 1
            out.dead_ends.append(
                DeadEnd(
                    origin.id,
                    origin.action,
                    f"recovery step {step.id} ({step.action}) cannot run: "
                    f"{{{', '.join(sorted(missing))}}} missing",
                    recovery=step.id,
                    missing=tuple(sorted(missing)),
                )
            )
            return
        action = problem.action(step.action)
        if action is not None and action.may_fail:
            fail(step, facts, seen)
        done = facts | gives(problem, step)
        out.traces += 1
        if not settled(done):
            lost = sorted(set(problem.safe) - done)
            why = f"{{{', '.join(lost)}}} still lost" if lost else "goal not reached"
            out.dead_ends.append(
                DeadEnd(
                    origin.id,
                    origin.action,
                    f"recovery step {step.id} ({step.action}) ends with {why}",
                    tuple(lost),
                    recovery=step.id,
                )
            )

    try:
        facts = set(problem.initial)
        for step in plan.main_line():
            visit()
            action = problem.action(step.action)
            if action is not None and action.may_fail:
                fail(step, set(facts), (step.id,))
            facts |= gives(problem, step)
        out.traces += 1
    except _Stop:
        pass
    return out
