"""A reference planner: breadth-first search over facts, no model.

It proves a problem is solvable (the problem-set test runs it on every shipped
problem) and builds known-good plans for tests. It finds a shortest main line to the
goal, then gives each risky step whose failure would leave neither the goal nor the
safe facts a one-step recovery branch.
"""

from __future__ import annotations

from collections import deque

from guardsearch.apps.plan.plan_format import Plan, PlanStep
from guardsearch.apps.plan.problems import Action, PlanProblem
from guardsearch.core.errors import ConfigError


def _main_line(problem: PlanProblem) -> list[Action]:
    start = frozenset(problem.initial)
    goal = set(problem.goal)
    queue: deque[tuple[frozenset[str], list[Action]]] = deque([(start, [])])
    seen = {start}
    while queue:
        facts, path = queue.popleft()
        if goal <= facts:
            return path
        for action in problem.actions:
            if set(action.pre) <= facts and not set(action.effects) <= facts:
                after = facts | set(action.effects)
                if after not in seen:
                    seen.add(after)
                    queue.append((after, [*path, action]))
    raise ConfigError(f"problem {problem.id}: no sequence of actions reaches the goal")


def _settled(problem: PlanProblem, facts: set[str]) -> bool:
    return set(problem.goal) <= facts or (bool(problem.safe) and set(problem.safe) <= facts)


def reference_plan(problem: PlanProblem, retry_budget: int = 1) -> Plan:
    """A plan that passes the Expansive guard for `problem`, or a ConfigError."""
    main = _main_line(problem)
    steps: list[PlanStep] = []
    recovery: list[PlanStep] = []  # ids follow the main line's: s<len(main) + k>
    facts = set(problem.initial)
    for i, action in enumerate(main, start=1):
        on_failure = None
        if action.may_fail:
            failed = facts - set(action.loses)
            if not _settled(problem, failed):
                fix = next(
                    (
                        a
                        for a in problem.actions
                        if not a.may_fail
                        and set(a.pre) <= failed
                        and _settled(problem, failed | set(a.effects))
                    ),
                    None,
                )
                if fix is None:
                    raise ConfigError(f"problem {problem.id}: no recovery when {action.name} fails")
                on_failure = f"s{len(main) + len(recovery) + 1}"
                recovery.append(_step(on_failure, fix, retry_budget))
        steps.append(_step(f"s{i}", action, retry_budget, on_failure))
        facts |= set(action.effects)
    plan = Plan(steps=[*steps, *recovery])
    if plan.total_retry_budget > problem.r_max:
        raise ConfigError(
            f"problem {problem.id}: the shortest plan needs {plan.total_retry_budget} "
            f"retries, more than R_max {problem.r_max}"
        )
    return plan


def _step(ident: str, action: Action, retry_budget: int, on_failure: str | None = None) -> PlanStep:
    return PlanStep(
        id=ident,
        action=action.name,
        pre=list(action.pre),
        effects=list(action.effects),
        retry_budget=retry_budget,
        on_failure=on_failure,
    )
