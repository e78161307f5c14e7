"""Plan repairs: a plan whose steps are right but out of order, put in order; and the
plan's own structure fixed where the guard's fix names exactly one change (a recovery
step for a dead end, retry budgets over R_max).

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

The structural repairs never choose which actions the plan takes towards its goal (that is
the model's work, and in the search the upstream steps'): a dead end gets the recovery
action that gives the lost safe facts back (`recovery_patch`: name a later step that
already does it in `on_failure`, or add one after the main steps), a recovery step that
does the wrong thing gets that action instead (`swap_patch`), and retry budgets over R_max
are lowered (`budget_patch`), and a main-line step that needs a fact no action of the
problem can ever give — a step that can never run, in any plan — is removed
(`drop_patch`). Each is a JSON Patch on the plan as the model wrote it; the engine judges
the patched plan again and keeps it only when it passes (chaining at most `MAX_REPAIRS`
fixes, so a recovery step added past R_max is then lowered). Inserting the steps the plan
left out of the strategy's order is `follow.py`'s.
"""

from __future__ import annotations

from typing import Any

from guardsearch.apps.plan.plan_format import Plan
from guardsearch.apps.plan.problems import Action, PlanProblem
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


def fresh_id(plan: Plan) -> str:
    """A step id the plan does not use yet: s<n> after its highest s<n>."""
    taken = {s.id for s in plan.steps}
    n = len(plan.steps) + 1
    while f"s{n}" in taken:
        n += 1
    return f"s{n}"


def step_value(action: Action, ident: str) -> dict[str, Any]:
    """A new step `ident` doing `action` (its needs and gifts stated, one attempt)."""
    return {
        "id": ident,
        "action": action.name,
        "pre": list(action.pre),
        "effects": list(action.effects),
        "retry_budget": 1,
    }


def recovery_patch(plan: Plan, risky: str, action: Action) -> Patch | None:
    """Give step `risky` a recovery step doing `action`: a later step that already does it
    and is nobody's recovery yet is named in `on_failure`; else a new step is added at the
    end and named. None when `risky` is not a step of the plan."""
    ids = [s.id for s in plan.steps]
    if risky not in ids:
        return None
    at = ids.index(risky)
    taken = plan.recovery_ids()
    later = next(
        (
            i
            for i in range(at + 1, len(plan.steps))
            if plan.steps[i].action == action.name and plan.steps[i].id not in taken
        ),
        None,
    )
    if later is not None:
        target, ops = plan.steps[later].id, []
    else:
        target = fresh_id(plan)
        ops = [{"op": "add", "path": "/steps/-", "value": step_value(action, target)}]
    ops.append({"op": "add", "path": f"/steps/{at}/on_failure", "value": target})
    return tuple(ops)


def swap_patch(plan: Plan, recovery: str, action: Action) -> Patch | None:
    """Make recovery step `recovery` do `action` instead (its needs and gifts with it)."""
    ids = [s.id for s in plan.steps]
    if recovery not in ids:
        return None
    at = ids.index(recovery)
    return (
        {"op": "add", "path": f"/steps/{at}/action", "value": action.name},
        {"op": "add", "path": f"/steps/{at}/pre", "value": list(action.pre)},
        {"op": "add", "path": f"/steps/{at}/effects", "value": list(action.effects)},
    )


def budget_patch(plan: Plan, lowered: dict[str, int]) -> Patch:
    """Set the retry budgets of the steps in `lowered` (id -> new budget)."""
    return tuple(
        {"op": "replace", "path": f"/steps/{i}/retry_budget", "value": lowered[s.id]}
        for i, s in enumerate(plan.steps)
        if s.id in lowered
    )


def drop_patch(plan: Plan, ident: str) -> Patch | None:
    """Remove main-line step `ident` (one that can never run). None when it is not a step
    of the plan, or names an `on_failure` step (removing it would turn that recovery step
    into a main-line one: not a change this repair may make)."""
    ids = [s.id for s in plan.steps]
    if ident not in ids or ids.count(ident) > 1:
        return None
    step = plan.steps[ids.index(ident)]
    if step.on_failure is not None or ident in plan.recovery_ids():
        return None
    return ({"op": "remove", "path": f"/steps/{ids.index(ident)}"},)
