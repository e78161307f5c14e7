"""Follow the strategy: put back the steps of the strategy's order that the plan left out.

In the search the strategy chose the actions towards the goal and their order; the
plan step turns that order into steps. On the embedded model the plan sometimes leaves
one out (on the committed run every plan of mig-email-verified-column dropped
backfill_column, whatever the feedback said). When the strategy's order on the path runs
from the initial facts and reaches the goal (`strategy_order`), that omission is
mechanical: `follow_patch` inserts, for each fact a main-line step needs and no step of
the plan gives, a step doing the action of the order that gives it, just before the step
that needs it (and, for a goal fact no main-line step gives, after the main line). It
repeats on the patched plan while the order has something to give, and returns the
patch only when the main line then meets every need and reaches the goal; a missing
fact the order does not give (or an order out of reach) means no patch.

The repair never chooses an action itself — only the strategy's — and the engine judges
the patched plan with every guard again and keeps it only when it passes (an action
recon did not list fails the Minimal check; a risky step put back gets its recovery
step from the dead-end repair in the same chain). Without a strategy on the path (the
single pipeline) there is nothing to follow.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from guardsearch.apps.plan.plan_format import MAX_STEPS, Plan, PlanStep
from guardsearch.apps.plan.problems import PlanProblem
from guardsearch.apps.plan.repair import Patch, fresh_id, step_value
from guardsearch.apps.plan.step_guards import earlier
from guardsearch.apps.plan.traces import gives, needs
from guardsearch.apps.plan.upstream import run_order
from guardsearch.core.context import Context


def strategy_order(problem: PlanProblem, context: Context | None) -> list[str] | None:
    """The order of the last strategy output in `context`, when it names only actions of
    the problem, runs from the initial facts and reaches the goal; else None."""
    value = earlier(context, "strategy") if context is not None else None
    order = value.get("order") if value is not None else None
    if not isinstance(order, list) or not order:
        return None
    names = [a for a in order if isinstance(a, str)]
    if len(names) != len(order) or any(problem.action(a) is None for a in names):
        return None
    unmet, missing = run_order(problem, names)
    return names if not unmet and not missing else None


def _giver(problem: PlanProblem, order: Sequence[str], fact: str, before: str | None) -> str | None:
    """The action of `order` that gives `fact`: the last one placed before `before`'s
    first place in the order (when `before` is in it), else the first one."""
    found = [i for i, name in enumerate(order) if fact in _effects(problem, name)]
    limit = list(order).index(before) if before is not None and before in order else -1
    placed = [i for i in found if i < limit]
    pick = placed[-1] if placed else (found[0] if found else None)
    return order[pick] if pick is not None else None


def _effects(problem: PlanProblem, name: str) -> tuple[str, ...]:
    action = problem.action(name)
    return action.effects if action is not None else ()


def _first_gap(
    problem: PlanProblem, steps: list[PlanStep], order: Sequence[str]
) -> tuple[int, str | None] | None:
    """The first fact the main line of `steps` lacks and none of its steps gives, as
    (list index to insert a step at, the order's action that gives it — None when the
    order gives none, or a main-line step gives it out of place, which is the reorder
    repair's); None when the main line meets every need and reaches the goal."""
    main = Plan.model_construct(steps=steps).main_line()
    given = {f for s in main for f in gives(problem, s)}
    facts = set(problem.initial)
    for step in main:
        missing = sorted(needs(problem, step) - facts)
        if missing:
            at = steps.index(step)
            fact = missing[0]
            return at, None if fact in given else _giver(problem, order, fact, step.action)
        facts |= gives(problem, step)
    goal = [g for g in problem.goal if g not in facts]
    if not goal:
        return None
    at = steps.index(main[-1]) + 1 if main else len(steps)
    return at, None if goal[0] in given else _giver(problem, order, goal[0], None)


def follow_patch(problem: PlanProblem, plan: Plan, order: Sequence[str] | None) -> Patch | None:
    """`add` operations that insert the strategy's steps the plan left out (see the
    module docstring), or None: no strategy to follow, nothing left out, a need the
    order does not give, or more than MAX_STEPS steps."""
    if not order:
        return None
    ids = [s.id for s in plan.steps]
    if len(set(ids)) != len(ids):
        return None
    steps = list(plan.steps)
    ops: list[dict[str, Any]] = []
    # Each insertion gives a fact no main-line step gave: at most one per fact.
    while (gap := _first_gap(problem, steps, order)) is not None:
        at, name = gap
        action = problem.action(name) if name is not None else None
        if action is None or len(steps) >= MAX_STEPS:
            return None
        value = step_value(action, fresh_id(Plan.model_construct(steps=steps)))
        ops.append({"op": "add", "path": f"/steps/{at}", "value": value})
        steps.insert(at, PlanStep.model_validate(value))
    return tuple(ops) if ops else None
