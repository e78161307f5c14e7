"""bfs / beam: level by level, expand every kept node, keep the best `width` children.

This is Tree of Thoughts' BFS (propose k next steps for each state, value each, keep
the best b; ToT uses b = 5). `bfs` keeps every viable child (width None) and `beam`
keeps 5 by default. A node whose expansion yields no viable child is re-expanded
with the feedback, up to `rmax` expansions. Cost: about width x depth expansions.
"""

from __future__ import annotations

from dataclasses import dataclass

from guardsearch.core.errors import ConfigError
from guardsearch.search.expand import Engine, order_key
from guardsearch.search.state import Termination
from guardsearch.search.strategies.base import register_strategy


@dataclass(frozen=True, kw_only=True)
class BeamOptions:
    """`width`: children kept per level (None keeps all); `rmax`: expansions per node."""

    width: int | None = 5
    rmax: int = 1

    def __post_init__(self) -> None:
        if self.width is not None and self.width < 1:
            raise ConfigError(f"width must be >= 1 or None, got {self.width}")
        if self.rmax < 1:
            raise ConfigError(f"rmax must be >= 1, got {self.rmax}")


@dataclass(frozen=True, kw_only=True)
class BFSOptions(BeamOptions):
    width: int | None = None


class Beam:
    name = "beam"
    Options: type[BeamOptions] = BeamOptions

    def start(self, engine: Engine, options: BeamOptions) -> None:
        engine.state.data = {"frontier": [engine.tree.root_id], "next": [], "index": 0}

    async def step(self, engine: Engine, options: BeamOptions) -> Termination | None:
        data = engine.state.data
        frontier: list[str] = data["frontier"]
        if data["index"] >= len(frontier):
            return self._next_level(engine, options)
        node = engine.node(frontier[data["index"]])
        expansion = await engine.expand(node)
        viable = sorted(expansion.viable, key=order_key)
        goals = [c for c in viable if c.status == "goal"]
        if goals:
            engine.state.goal = goals[0].id
            return "success"
        if not viable and node.expansions < options.rmax:
            feedback = engine.failure_of(expansion).feedback
            engine.add_feedback(node, feedback)
            engine.trace.emit("retry", step=node.step, node=node.id, feedback=feedback)
            return None
        data["next"] += [c.id for c in viable]
        data["index"] += 1
        return None

    def _next_level(self, engine: Engine, options: BeamOptions) -> Termination | None:
        data = engine.state.data
        ranked = sorted((engine.node(i) for i in data["next"]), key=order_key)
        if not ranked:
            return "all_pruned"
        kept = ranked if options.width is None else ranked[: options.width]
        for dropped in ranked[len(kept) :]:
            engine.set_status(dropped, "pruned")
        engine.trace.emit(
            "phase",
            action="level",
            depth=kept[0].depth,
            kept=[n.id for n in kept],
            pruned=len(ranked) - len(kept),
        )
        data["frontier"], data["next"], data["index"] = [n.id for n in kept], [], 0
        return None


class BFS(Beam):
    name = "bfs"
    Options = BFSOptions


register_strategy(Beam())
register_strategy(BFS())
