"""The reorder repair: a plan whose steps are right but out of order, put in order.

When some order of a plan's own steps runs every main-line step with its needs met
(and names every `on_failure` step after the step that names it), the plan guards
return that order as a JSON Patch (RFC 6902 `move` operations on `/steps`) with their
verdict. The step or search engine applies it, judges the repaired plan again and
keeps it without a model call when it passes (docs/guards.md, "Repair").

Facts only accumulate along the main line (a step's `loses` apply only when it fails),
so a greedy order — at each position the first remaining step, in the plan's own
order, whose needs already hold — finds an order whenever one exists, and moves as
little as it can. Recovery steps go after the main line, in an order where every
`on_failure` among them names a later one. With no problem (a free task) there are no
known needs: only the recovery steps are moved.
"""

from __future__ import annotations

from typing import Any

from guardsearch.apps.plan.plan_format import Plan
from guardsearch.apps.plan.problems import PlanProblem
from guardsearch.apps.plan.traces import gives, needs

Patch = tuple[dict[str, Any], ...]


def _main_order(problem: PlanProblem, plan: Plan, main: list[int]) -> list[int] | None:
    facts = set(problem.initial)
    left = list(main)
    order: list[int] = []
    while left:
        ready = next((i for i in left if needs(problem, plan.steps[i]) <= facts), None)
        if ready is None:
            return None  # some need is given by no step of the plan: no order helps
        left.remove(ready)
        order.append(ready)
        facts |= gives(problem, plan.steps[ready])
    return order


def _recovery_order(plan: Plan, recovery: list[int]) -> list[int] | None:
    """Recovery steps (stable) so that every on_failure among them points forward."""
    index = {plan.steps[i].id: i for i in recovery}
    # i must come before the step it names; count each step's predecessors among them.
    waiting = {i: 0 for i in recovery}
    for i in recovery:
        target = plan.steps[i].on_failure
        if target in index:
            waiting[index[target]] += 1
    order: list[int] = []
    left = list(recovery)
    while left:
        ready = next((i for i in left if waiting[i] == 0), None)
        if ready is None:
            return None  # a cycle of failure branches: no order helps
        left.remove(ready)
        order.append(ready)
        target = plan.steps[ready].on_failure
        if target in index:
            waiting[index[target]] -= 1
    return order


def reorder(problem: PlanProblem | None, plan: Plan) -> list[int] | None:
    """Indices of `plan.steps` in an order that satisfies every main-line step's needs
    and names only later steps in `on_failure`; None when the plan is already in such an
    order or no order of its steps is (duplicate ids: None)."""
    ids = [s.id for s in plan.steps]
    if len(set(ids)) != len(ids):
        return None
    recovery_ids = plan.recovery_ids()
    main = [i for i, s in enumerate(plan.steps) if s.id not in recovery_ids]
    recovery = [i for i, s in enumerate(plan.steps) if s.id in recovery_ids]
    first = _main_order(problem, plan, main) if problem is not None else main
    then = _recovery_order(plan, recovery)
    if first is None or then is None:
        return None
    order = first + then
    return None if order == list(range(len(plan.steps))) else order


def move_patch(order: list[int]) -> Patch:
    """The RFC 6902 `move` operations that put `/steps` in `order` (indices of the old
    list): each moves one step up to its place, so the steps before it never shift."""
    current = list(range(len(order)))
    ops: list[dict[str, Any]] = []
    for position, wanted in enumerate(order):
        at = current.index(wanted)
        if at != position:
            ops.append({"op": "move", "from": f"/steps/{at}", "path": f"/steps/{position}"})
            current.insert(position, current.pop(at))
    return tuple(ops)


def reorder_patch(problem: PlanProblem | None, plan: Plan) -> Patch | None:
    """The patch that reorders `plan` (see `reorder`), or None when none is needed or
    none would help."""
    order = reorder(problem, plan)
    return move_patch(order) if order is not None else None
