"""Running accepted search code: breadth-first, depth-first or A* over generated functions.

`run_program` loads the model's `successors` and `is_goal` into two sandboxes (one
process per function for the whole search) and walks the state space in the order
asked (`SEARCH_ORDERS`):

- `bfs`: level by level, each level one sandbox batch (the cheapest in round trips);
- `dfs`: the first successor first, one expansion at a time, to the domain's depth limit;
- `astar`: lowest f = g + h first, h from the domain's own `heuristic` (a cheap estimate
  such as numbers left or blocks out of place, never a solver's answer); a goal is
  returned when it is taken off the open list.

Every order applies the same search-time checks: each successor must be a legal move by
the domain's validator, each `is_goal` answer a bool, each goal it claims a real goal.
Code that breaks one stops the search with a `CodeFault` naming the state, which goes
back to the writer as a new test. The same `max_states` bounds the states generated.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from guardsearch.core.errors import ConfigError
from guardsearch.guards.code import allowlist_problems
from guardsearch.guards.code_tests import show_call, show_value
from guardsearch.guards.sandbox import CallOutcome, Limits, Sandbox

if TYPE_CHECKING:
    from guardsearch.search.program import ProgramDomain

SearchOrder = Literal["bfs", "dfs", "astar"]
SEARCH_ORDERS: tuple[SearchOrder, ...] = ("bfs", "dfs", "astar")


@dataclass(frozen=True)
class CodeFault:
    """Accepted code misbehaving at search time: which function, on which state, why."""

    fn: str
    state: Any
    feedback: str


@dataclass
class ProgramRun:
    """A search over generated code: the solution path of states (root first) when one
    was found, a `fault` when the code broke a rule, the states expanded and generated,
    and the deepest level reached."""

    path: list[Any] | None = None
    fault: CodeFault | None = None
    expanded: int = 0
    generated: int = 0
    levels: int = 0
    notes: list[str] = field(default_factory=list)


class _Walk:
    """What every order shares: the two sandboxes, the validator's checks, the parents
    of every state (a state is kept at the shallowest depth it was reached at)."""

    def __init__(
        self, domain: ProgramDomain, succ: Sandbox, goal: Sandbox, run: ProgramRun
    ) -> None:
        self.domain = domain
        self.succ = succ
        self.goal = goal
        self.run = run
        root = domain.key(domain.root)
        self.parents: dict[Hashable, tuple[Hashable | None, Any]] = {root: (None, domain.root)}
        self.depth: dict[Hashable, int] = {root: 0}

    async def expand(self, states: list[Any]) -> list[tuple[Any, int]] | None:
        """The new children of `states` (each with its depth), in the order the code
        gave them; None when the code broke a rule (`run.fault` says how)."""
        outs = await self.succ.call_many([("successors", (s,)) for s in states])
        self.run.expanded += len(states)
        children: list[tuple[Any, int]] = []
        for parent, out in zip(states, outs, strict=True):
            fault = _successor_fault(self.domain, parent, out)
            if fault is not None:
                self.run.fault = fault
                return None
            pkey = self.domain.key(parent)
            depth = self.depth[pkey] + 1
            for child in out.value:
                key = self.domain.key(child)
                if self.depth.get(key, depth + 1) <= depth:
                    continue  # reached before, as shallow or shallower
                self.parents[key] = (pkey, child)
                self.depth[key] = depth
                children.append((child, depth))
        self.run.generated += len(children)
        self.run.levels = max([self.run.levels, *(d for _, d in children)])
        return children

    async def judged(self, states: list[Any]) -> list[tuple[Any, int, bool]] | None:
        """The new children of `states` with their depth and whether each is a goal:
        `expand` then `goals`; None when the code broke a rule."""
        children = await self.expand(states)
        if children is None:
            return None
        verdicts = await self.goals([c for c, _ in children])
        if verdicts is None:
            return None
        return [(c, d, won) for (c, d), won in zip(children, verdicts, strict=True)]

    async def goals(self, states: list[Any]) -> list[bool] | None:
        """`is_goal` on each state, every True checked by the domain's goal test;
        None when the code broke a rule."""
        extra = self.domain.goal_args
        outs = await self.goal.call_many([("is_goal", (s, *extra)) for s in states])
        verdicts: list[bool] = []
        for state, out in zip(states, outs, strict=True):
            call = show_call("is_goal", (state, *extra))
            if out.kind != "ok" or not isinstance(out.value, bool):
                got = out.error if out.kind != "ok" else show_value(out.value)
                self.run.fault = CodeFault(
                    "is_goal", state, f"{call} gave {out.kind} {got}; expected True or False"
                )
                return None
            if out.value:
                why = _goal_check(self.domain, state)
                if why is not None:
                    self.run.fault = CodeFault(
                        "is_goal", state, f"{call} returned True, but it is not a goal: {why}"
                    )
                    return None
            verdicts.append(out.value)
        return verdicts

    def path(self, state: Any) -> list[Any]:
        out: list[Any] = []
        current: Hashable | None = self.domain.key(state)
        while current is not None:
            parent, node = self.parents[current]
            out.append(node)
            current = parent
        out.reverse()
        return out

    def is_current(self, state: Any, depth: int) -> bool:
        """False for a stale entry: the state was reached shallower since it was queued."""
        return self.depth.get(self.domain.key(state)) == depth


async def run_program(
    domain: ProgramDomain,
    sources: dict[str, str],
    *,
    limits: Limits,
    max_states: int = 200_000,
    order: str = "bfs",
) -> ProgramRun:
    """Search `domain` in `order` with the generated `successors` and `is_goal`, every
    successor checked by the domain's validator, at most about `max_states` states."""
    if order not in SEARCH_ORDERS:
        raise ConfigError(f"search must be one of {', '.join(SEARCH_ORDERS)}, got {order!r}")
    if order == "astar" and domain.heuristic is None:
        raise ConfigError(f"search 'astar' needs a heuristic; domain {domain.name!r} has none")
    run = ProgramRun()
    for name in ("successors", "is_goal"):
        # The code may come from a cache file or a run store, not from this run's tests:
        # it is vetted again before it runs (the sandbox itself holds without it).
        problems = allowlist_problems(sources[name], limits.allowed)
        if problems:
            why = "; ".join(problems[:3])
            run.fault = CodeFault(name, domain.root, f"the code is not allowed: {why}")
            return run
    async with (
        Sandbox(sources["successors"], limits, mutable=domain.mutable_state) as succ,
        Sandbox(sources["is_goal"], limits, mutable=domain.mutable_state) as goal,
    ):
        for name, box in (("successors", succ), ("is_goal", goal)):
            if box.loaded.kind != "ok":
                run.fault = CodeFault(name, domain.root, f"the module failed: {box.loaded.error}")
                return run
        walk = _Walk(domain, succ, goal, run)
        first = await walk.goals([domain.root])
        if first is None or first[0]:
            run.path = [domain.root] if first else None
            return run
        await {"bfs": _bfs, "dfs": _dfs, "astar": _astar}[order](walk, max_states)
    return run


async def _bfs(walk: _Walk, max_states: int) -> None:
    frontier = [walk.domain.root]
    for _depth in range(walk.domain.max_depth):
        if not frontier or walk.run.generated > max_states:
            return
        children = await walk.judged(frontier)
        if children is None:
            return
        for child, _, won in children:
            if won:
                walk.run.path = walk.path(child)
                return
        frontier = [c for c, _, _ in children]


async def _dfs(walk: _Walk, max_states: int) -> None:
    stack: list[tuple[Any, int]] = [(walk.domain.root, 0)]
    while stack and walk.run.generated <= max_states:
        state, depth = stack.pop()
        if not walk.is_current(state, depth) or depth >= walk.domain.max_depth:
            continue
        children = await walk.judged([state])
        if children is None:
            return
        for child, _, won in children:
            if won:
                walk.run.path = walk.path(child)
                return
        # the code's first successor is tried first
        stack.extend((c, d) for c, d, _ in reversed(children))


async def _astar(walk: _Walk, max_states: int) -> None:
    heuristic = walk.domain.heuristic
    assert heuristic is not None
    order = itertools.count()
    root = walk.domain.root
    # (f, h, insertion order, depth, is a goal, state): ties go to the lower h, then FIFO.
    h0 = float(heuristic(root))
    open_: list[tuple[float, float, int, int, bool, Any]] = [(h0, h0, next(order), 0, False, root)]
    while open_ and walk.run.generated <= max_states:
        _f, _h, _n, depth, won, state = heapq.heappop(open_)
        if not walk.is_current(state, depth):
            continue
        if won:
            walk.run.path = walk.path(state)
            return
        if depth >= walk.domain.max_depth:
            continue
        children = await walk.judged([state])
        if children is None:
            return
        for child, d, goal in children:
            h = 0.0 if goal else float(heuristic(child))
            heapq.heappush(open_, (d + h, h, next(order), d, goal, child))


def _goal_check(domain: ProgramDomain, state: Any) -> str | None:
    try:
        return domain.goal(state)
    except Exception as exc:
        return f"the goal test cannot read it ({type(exc).__name__}: {str(exc)[:120]})"


def _checked(domain: ProgramDomain, parent: Any, child: Any) -> str | None:
    """Why `child` is no legal successor of `parent` (None: it is). A value of a shape
    the validator did not foresee is an illegal move, never an exception here."""
    try:
        why = domain.legal(parent, child)
        if why is None:
            hash(domain.key(child))
    except Exception as exc:
        return f"a state this domain cannot read ({type(exc).__name__}: {str(exc)[:120]})"
    return why


def _successor_fault(domain: ProgramDomain, parent: Any, out: CallOutcome) -> CodeFault | None:
    call = show_call("successors", (parent,))
    if out.kind != "ok":
        return CodeFault("successors", parent, f"{call} gave {out.kind}: {out.error}")
    if not isinstance(out.value, list):
        return CodeFault(
            "successors", parent, f"{call} returned {show_value(out.value)}, not a list"
        )
    for child in out.value:
        why = _checked(domain, parent, child)
        if why is not None:
            return CodeFault(
                "successors",
                parent,
                f"{call} produced {show_value(child)}, not a legal move: {why}",
            )
    return None
