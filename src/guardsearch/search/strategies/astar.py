"""astar / best_first: always expand the open node with the lowest f (docs/search.md).

f = g_weight x g + h, where g is the path cost (one per step by default, or any
`cost(node)`), and h = 1 - score from the node's verdict; a failed hard check or a
fatal verdict gives h = inf and the node never enters the open set. `best_first` is
the same with g_weight = 0 (greedy on h). With `width`, only the best `width` open
nodes survive each expansion (quota-aware beam-A*). A node whose expansion yields
no viable child is re-expanded with the feedback, up to `rmax` times. Budget is
reserved before every expansion (the engine) and every call (Metered).

A greedy proposer tends to run dry: at temperature 0 it lists the same few steps again,
dedup drops them, and the open set empties with budget left (`all_pruned`). A node's
second and later expansions therefore follow the engine's schedule (default 0.7, then
1.0, with fresh seeds, and the node's earlier children listed in the prompt);
`reexpand_temperature` fixes their temperature instead. `reopen` (off by default) puts
the expanded nodes that still have expansions left (fewer than `rmax`) back into the
open set when it runs dry.

The open set is a `Table` (node id -> f, creation order, retry flag), so a durable
run saves only the entries pushed and popped by each expansion, not the whole set.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from guardsearch.core.errors import ConfigError
from guardsearch.search.expand import Engine
from guardsearch.search.node import Node
from guardsearch.search.state import Table, Termination
from guardsearch.search.strategies.base import register_strategy, rmax_at

DEFAULT_RMAX = 2  # expansions per node when neither the search nor the space says


@dataclass(frozen=True, kw_only=True)
class AStarOptions:
    """`g_weight` scales the path cost; `width` bounds the open set; `rmax` expansions per
    node (a node that yielded nothing viable goes back into the open set with its f
    raised by `retry_penalty` per failed expansion, so a retry competes with the other
    open nodes); `stop_at_first_goal` ends at the first goal generated (cheapest)
    instead of when it is popped.

    `rmax` None: the space's `level_rmax` (a `StepSpace` step's `rmax`), else
    `DEFAULT_RMAX`.

    `reopen`: when the open set runs dry, re-open the expanded nodes with expansions
    left (f raised by `retry_penalty` per expansion) instead of ending `all_pruned`.
    `reexpand_temperature`: the temperature of a node's second and later expansions
    (None: the engine's schedule decides, by default 0.7 then 1.0; seeds are fresh
    either way). At temperature 0 a greedy model repeats itself whatever the seed, so
    `schedule="fixed"` with `reexpand_temperature=0` makes `reopen` useless."""

    g_weight: float = 0.1
    cost: Callable[[Node], float] | None = None
    width: int | None = None
    rmax: int | None = None
    retry_penalty: float = 0.5
    stop_at_first_goal: bool = True
    reopen: bool = False
    reexpand_temperature: float | None = None

    def __post_init__(self) -> None:
        if self.g_weight < 0:
            raise ConfigError(f"g_weight must be >= 0, got {self.g_weight}")
        if self.width is not None and self.width < 1:
            raise ConfigError(f"width must be >= 1 or None, got {self.width}")
        if self.rmax is not None and self.rmax < 1:
            raise ConfigError(f"rmax must be >= 1, got {self.rmax}")
        if self.retry_penalty < 0:
            raise ConfigError(f"retry_penalty must be >= 0, got {self.retry_penalty}")
        if self.reexpand_temperature is not None and self.reexpand_temperature < 0:
            raise ConfigError(f"reexpand_temperature must be >= 0, got {self.reexpand_temperature}")


@dataclass(frozen=True, kw_only=True)
class BestFirstOptions(AStarOptions):
    g_weight: float = 0.0


def _seq(node: Node) -> int:
    return int(node.id[1:]) if node.id[1:].isdigit() else 0


class AStar:
    name = "astar"
    Options: type[AStarOptions] = AStarOptions

    def f(self, node: Node, options: AStarOptions) -> float:
        g = options.cost(node) if options.cost is not None else node.g
        return options.g_weight * g + node.h

    def start(self, engine: Engine, options: AStarOptions) -> None:
        root = engine.tree.root
        engine.state.data = {"current": None}
        engine.state.tables["open"] = Table()
        _push(engine, [self.f(root, options), 0, root.id], retry=False)

    async def step(self, engine: Engine, options: AStarOptions) -> Termination | None:
        data = engine.state.data
        table, heap = _open_set(engine)
        if data["current"] is None:
            if not heap and options.reopen:
                self._reopen(engine, options)
            while heap:
                _, _, ident = heapq.heappop(heap)
                retry = bool(table.get(ident)[2])
                table.delete(ident)
                node = engine.node(str(ident))
                if node.status == "goal":
                    engine.state.goal = node.id
                    return "success"
                if node.status in ("open", "root") or retry:
                    data["current"] = node.id
                    break
            else:
                return "all_pruned"
        node = engine.node(data["current"])
        # Re-expansions follow the engine's schedule (warmer, fresh seeds), unless
        # `reexpand_temperature` fixes their temperature.
        heat = options.reexpand_temperature if node.expansions else None
        expansion = await engine.expand(node, temperature=heat)
        viable = expansion.viable
        goals = sorted((c for c in viable if c.status == "goal"), key=lambda c: (c.h, _seq(c)))
        if goals and options.stop_at_first_goal:
            engine.state.goal = goals[0].id
            return "success"
        data["current"] = None
        # An exhausted node (its space had nothing new to propose) is not retried.
        rmax = rmax_at(engine, options.rmax, node.depth, DEFAULT_RMAX)
        if not viable and node.expansions < rmax and not expansion.exhausted:
            feedback = engine.failure_of(expansion).feedback
            engine.add_feedback(node, feedback)
            f = self.retry_f(node, options)
            _push(engine, [f, _seq(node), node.id], retry=True)
            engine.trace.emit(
                "retry", step=node.step, node=node.id, feedback=feedback, f=round(f, 6)
            )
        for child in viable:
            f = self.f(child, options)
            if not math.isinf(f):
                _push(engine, [f, _seq(child), child.id], retry=False)
        if options.width is not None and len(heap) > options.width:
            ranked = sorted(heap)  # by f, then creation order
            for entry in ranked[options.width :]:
                engine.set_status(engine.node(str(entry[2])), "pruned")
                table.delete(entry[2])
            heap[:] = ranked[: options.width]  # a sorted list is a valid heap
        return None

    def retry_f(self, node: Node, options: AStarOptions) -> float:
        """f of a node going back into the open set: raised per expansion it has had."""
        return self.f(node, options) + options.retry_penalty * node.expansions

    def _reopen(self, engine: Engine, options: AStarOptions) -> None:
        """Put back every expanded node with expansions left, as a retry. (Only nodes
        with a finite h ever entered the open set, so none of these is pruned.)"""
        reopened = []
        for node in engine.tree.nodes.values():
            rmax = rmax_at(engine, options.rmax, node.depth, DEFAULT_RMAX)
            if node.status in ("expanded", "root") and node.expansions < rmax:
                _push(engine, [self.retry_f(node, options), _seq(node), node.id], retry=True)
                reopened.append(node.id)
        if reopened:
            engine.trace.emit("note", what="reopen", nodes=reopened)


def _open_set(engine: Engine) -> tuple[Table, list[list[Any]]]:
    """The open set: rows node id -> [f, creation order, retry], and its heap in memory.

    The rows are what a checkpoint saves (only those pushed or popped since the last
    one); the heap of [f, creation order, id] is rebuilt from them after a load. Its
    entries are distinct, so the order of pops depends only on the rows.
    """
    state = engine.state
    table = state.tables.get("open")
    if table is None:  # saved before the open set was a table: a heap list in `data`
        table = state.tables["open"] = Table()
        retry = set(state.data.pop("retry", []))
        for f, seq, ident in state.data.pop("open", []):
            table.put(ident, [f, seq, ident in retry])
    if table.cache is None:
        table.cache = sorted([f, seq, ident] for ident, (f, seq, _) in table.items())
    return table, table.cache


def _push(engine: Engine, entry: list[Any], *, retry: bool) -> None:
    table, heap = _open_set(engine)
    f, seq, ident = entry
    table.put(ident, [f, seq, retry])
    heapq.heappush(heap, entry)


class BestFirst(AStar):
    name = "best_first"
    Options = BestFirstOptions


register_strategy(AStar())
register_strategy(BestFirst())
