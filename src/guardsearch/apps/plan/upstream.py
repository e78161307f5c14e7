"""What recon and the strategy owe the plan: enough actions, and an order that runs.

Recon's list is judged by what a plan could do with it: from the initial facts, can the
listed actions (in some order, ignoring failures) give every goal fact? The strategy's
order is judged by running it: does each action find what it needs, and does the goal
hold at the end? Both come with the fix, found the way `fixes.py` finds one — for each
fact still wanted, one action of the problem that gives it (one look-up, repeated while
an added action needs something nothing listed gives; never a search over orders):

- `missing_actions`: the actions to add to a list so that it can reach the goal;
- `runnable_order`: an order of the strategy's actions (plus any a list adds) in which
  every action's needs hold and the goal is reached, moving as little as it can (each
  time, the first action in the strategy's own order whose needs hold; an action that
  can never run there is dropped).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from guardsearch.apps.plan.fixes import closure, givers
from guardsearch.apps.plan.problems import Action, PlanProblem


def _known(problem: PlanProblem, names: Iterable[str]) -> list[Action]:
    found = (problem.action(n) for n in dict.fromkeys(names))
    return [a for a in found if a is not None]


def sufficient(problem: PlanProblem, names: Iterable[str]) -> bool:
    """Can the actions `names` reach the goal from the initial facts?"""
    return set(problem.goal) <= closure(problem, names)


def wanted_facts(problem: PlanProblem, names: Iterable[str]) -> list[str]:
    """The facts no action in `names` can give where they are needed: goal facts out of
    reach, and what a listed giver of one needs but cannot get, in that order."""
    have = _known(problem, names)
    facts = closure(problem, names)
    queue = [g for g in problem.goal if g not in facts]
    seen: set[str] = set()
    out: list[str] = []
    while queue:
        fact = queue.pop(0)
        if fact in seen:
            continue
        seen.add(fact)
        mine = [a for a in have if fact in a.effects]
        if mine:  # a listed action gives it but cannot run: what it needs is wanted
            blocked = min(mine, key=lambda a: len(set(a.pre) - facts))
            queue += [p for p in blocked.pre if p not in facts]
        else:
            out.append(fact)
    return out


def missing_actions(
    problem: PlanProblem, names: Sequence[str], pool: Sequence[str] | None = None
) -> list[str] | None:
    """The actions (from `pool`, default: all the problem's) to add to `names` so that
    they reach the goal; [] when they already do, None when the pool cannot."""
    allowed = set(pool) if pool is not None else set(problem.action_names)
    have = list(dict.fromkeys(names))
    added: list[str] = []
    for _ in range(len(problem.actions)):
        wanted = wanted_facts(problem, have)
        if not wanted:
            return added
        facts = closure(problem, have)
        new = []
        for fact in wanted:
            options = [a for a in givers(problem, fact, facts) if a.name in allowed]
            pick = next((a.name for a in options if a.name not in have), None)
            if pick is not None and pick not in new:
                new.append(pick)
        if not new:
            return None
        have += new
        added += new
    return None


def run_order(problem: PlanProblem, order: Sequence[str]) -> tuple[list[str], list[str]]:
    """Run `order` from the initial facts: (each action whose needs were unmet, with what
    it lacked, as text; the goal facts missing at the end)."""
    facts = set(problem.initial)
    unmet: list[str] = []
    for name in order:
        action = problem.action(name)
        if action is None:
            continue
        lacking = [p for p in action.pre if p not in facts]
        if lacking:
            unmet.append(f"{name} needs {', '.join(lacking)}")
        facts |= set(action.effects)
    return unmet, [g for g in problem.goal if g not in facts]


def runnable_order(
    problem: PlanProblem, order: Sequence[str], pool: Sequence[str] | None = None
) -> list[str] | None:
    """An order of `order`'s actions, plus those `missing_actions` adds from `pool`, in
    which every action's needs hold and the goal is reached; None when there is none."""
    adds = missing_actions(problem, order, pool)
    if adds is None:
        return None
    left = _known(problem, [*order, *adds])
    facts = set(problem.initial)
    out: list[str] = []
    while left:
        ready = next((a for a in left if set(a.pre) <= facts), None)
        if ready is None:
            break  # what is left can never run here: dropped
        left.remove(ready)
        out.append(ready.name)
        facts |= set(ready.effects)
    return out if set(problem.goal) <= facts else None
