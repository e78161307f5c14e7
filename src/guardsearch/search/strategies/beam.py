"""bfs / beam: level by level, expand every kept node, keep the best `width` children.

This is Tree of Thoughts' BFS (propose k next steps for each state, value each, keep
the best b; ToT uses b = 5). `bfs` keeps every viable child (width None) and `beam`
keeps 5 by default. A node whose expansion yields no viable child is re-expanded
with the feedback, up to `rmax` expansions. Cost: about width x depth expansions.

The level being expanded and the children collected for the next one are `Table`s
of node ids: each expansion deletes its node's row and adds its children's, so a
durable run saves what an expansion changed, never a whole level.

With `concurrency > 1` an expansion's samples and its judging run concurrently (the
engine); `prefetch=True` also starts the proposer calls of the next nodes of the
level ahead of their turn. Nodes are committed in the level's order either way, so
the tree is the sequential run's; prefetch may pay for calls a goal made unnecessary.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass

from guardsearch.core.errors import ConfigError
from guardsearch.search.expand import Engine, order_key
from guardsearch.search.state import Table, Termination
from guardsearch.search.strategies.base import register_strategy, rmax_at

DEFAULT_RMAX = 1  # expansions per node when neither the search nor the space says


@dataclass(frozen=True, kw_only=True)
class BeamOptions:
    """`width`: children kept per level (None keeps all); `rmax`: expansions per node
    (None: the space's `level_rmax`, e.g. a `StepSpace` step's `rmax`, else
    `DEFAULT_RMAX`);
    `prefetch`: with concurrency > 1, start the proposer calls of the level's next
    nodes while the current one is judged (faster; when a goal ends the level, the
    calls already made for the nodes after it are paid for and unused)."""

    width: int | None = 5
    rmax: int | None = None
    prefetch: bool = False

    def __post_init__(self) -> None:
        if self.width is not None and self.width < 1:
            raise ConfigError(f"width must be >= 1 or None, got {self.width}")
        if self.rmax is not None and self.rmax < 1:
            raise ConfigError(f"rmax must be >= 1, got {self.rmax}")


@dataclass(frozen=True, kw_only=True)
class BFSOptions(BeamOptions):
    width: int | None = None


class Beam:
    name = "beam"
    Options: type[BeamOptions] = BeamOptions

    def start(self, engine: Engine, options: BeamOptions) -> None:
        engine.state.data = {"level": "a"}
        engine.state.tables["a"] = Table([(engine.tree.root_id, None)])
        engine.state.tables["b"] = Table()

    async def step(self, engine: Engine, options: BeamOptions) -> Termination | None:
        level, todo, following = _levels(engine)
        if not todo:
            return self._next_level(engine, options)
        if options.prefetch and engine.options.concurrency > 1:
            # Nodes are still expanded and committed one by one, in the level's order.
            for ident in itertools.islice(todo, engine.lookahead):
                if not engine.prefetch(engine.node(ident)):
                    break
        node = engine.node(todo[0])
        expansion = await engine.expand(node)
        viable = sorted(expansion.viable, key=order_key)
        goals = [c for c in viable if c.status == "goal"]
        if goals:
            engine.state.goal = goals[0].id
            return "success"
        if not viable and node.expansions < rmax_at(engine, options.rmax, node.depth, DEFAULT_RMAX):
            feedback = engine.failure_of(expansion).feedback
            engine.add_feedback(node, feedback)
            engine.trace.emit("retry", step=node.step, node=node.id, feedback=feedback)
            return None
        for child in viable:
            following.put(child.id, None)
        todo.popleft()
        level.delete(node.id)  # done with it: a level's rows go as its nodes are expanded
        return None

    def _next_level(self, engine: Engine, options: BeamOptions) -> Termination | None:
        data = engine.state.data
        done = data["level"]
        following = engine.state.tables[_other(done)]
        ranked = sorted((engine.node(i) for i in following), key=order_key)
        if not ranked:
            return "all_pruned"
        kept = ranked if options.width is None else ranked[: options.width]
        for dropped in ranked[len(kept) :]:
            engine.set_status(dropped, "pruned")
            following.delete(dropped.id)
        engine.trace.emit(
            "phase",
            action="level",
            depth=kept[0].depth,
            kept=[n.id for n in kept],
            pruned=len(ranked) - len(kept),
        )
        # The next level is what was collected (its rows are saved already); the done
        # level's table, empty now, collects the one after.
        data["level"] = _other(done)
        following.cache = deque(n.id for n in kept)
        return None


def _other(level: str) -> str:
    return "b" if level == "a" else "a"


def _levels(engine: Engine) -> tuple[Table, deque[str], Table]:
    """The level being expanded (a table, and its ids still to expand, best first) and
    the table collecting the next level's nodes.

    Both levels are `Table`s that change by a row per node: a node's row is deleted
    when it has been expanded and each child's row added, so a durable run never
    rewrites a level.
    """
    state = engine.state
    tables, data = state.tables, state.data
    if "level" not in data:  # saved before the levels were tables: lists in `data`
        frontier = data.pop("frontier", [])[data.pop("index", 0) :]
        tables["a"] = Table((i, None) for i in frontier)
        tables["b"] = Table((i, None) for i in data.pop("next", []))
        data["level"] = "a"
    level = tables[data["level"]]
    if level.cache is None:  # after a load: the level's order is best first
        level.cache = deque(sorted(level, key=lambda i: order_key(engine.node(i))))
    todo: deque[str] = level.cache
    return level, todo, tables[_other(data["level"])]


class BFS(Beam):
    name = "bfs"
    Options = BFSOptions


register_strategy(Beam())
register_strategy(BFS())
