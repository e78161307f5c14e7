"""refine: retry with feedback and keep the best (hill climbing).

At each level the node is expanded until a candidate passes, with the failure
feedback in the retry channel, up to `rmax` expansions; the best passing child is
taken and never revisited (no backtracking). At the last level, with
`target_score`, refinement goes on (feedback: the checks that failed) until a goal
reaches the target or `rmax` runs out, and the best goal so far wins. Cost: at most
rmax x depth expansions.
"""

from __future__ import annotations

from dataclasses import dataclass

from guardsearch.core.errors import ConfigError
from guardsearch.search.expand import Engine, order_key
from guardsearch.search.node import Node
from guardsearch.search.state import Termination
from guardsearch.search.strategies.base import register_strategy, rmax_at

DEFAULT_RMAX = 3  # expansions per level when neither the search nor the space says


@dataclass(frozen=True, kw_only=True)
class RefineOptions:
    """`rmax`: expansions per level (None: the space's `level_rmax`, e.g. a
    `StepSpace` step's `rmax`, else `DEFAULT_RMAX`); `target_score`: keep refining
    goals below it."""

    rmax: int | None = None
    target_score: float | None = None

    def __post_init__(self) -> None:
        if self.rmax is not None and self.rmax < 1:
            raise ConfigError(f"rmax must be >= 1, got {self.rmax}")
        if self.target_score is not None and not 0.0 <= self.target_score <= 1.0:
            raise ConfigError(f"target_score must be in 0..1, got {self.target_score}")


def _score(node: Node) -> float:
    return node.score if node.score is not None else 1.0


def _below_target(node: Node, target: float) -> str:
    failed = [c.name for c in (node.verdict.checks if node.verdict else ()) if not c.passed]
    why = f"; failed checks: {', '.join(failed)}" if failed else ""
    return f"score {_score(node):.2f} is below the target {target:.2f}{why}"


class Refine:
    name = "refine"
    Options = RefineOptions

    def start(self, engine: Engine, options: RefineOptions) -> None:
        engine.state.data = {"current": engine.tree.root_id, "best": None}

    async def step(self, engine: Engine, options: RefineOptions) -> Termination | None:
        data = engine.state.data
        node = engine.node(data["current"])
        if node.expansions >= rmax_at(engine, options.rmax, node.depth, DEFAULT_RMAX):
            if data["best"] is not None:
                engine.state.goal = data["best"]
                return "success"
            return "all_pruned"
        expansion = await engine.expand(node)
        viable = sorted(expansion.viable, key=order_key)
        goals = [c for c in viable if c.status == "goal"]
        if goals:
            best = engine.node(data["best"]) if data["best"] else None
            top = max(goals, key=_score)
            if best is None or _score(top) > _score(best):
                data["best"] = best_id = top.id
            else:
                best_id = best.id
            if options.target_score is None or _score(engine.node(best_id)) >= options.target_score:
                engine.state.goal = best_id
                return "success"
            feedback = _below_target(top, options.target_score)
        elif viable:
            data["current"] = viable[0].id  # climb: take the best and never look back
            engine.trace.emit("phase", node=viable[0].id, action="climb")
            return None
        else:
            feedback = engine.failure_of(expansion).feedback
        engine.add_feedback(node, feedback)
        engine.trace.emit("retry", step=node.step, node=node.id, feedback=feedback)
        return None


register_strategy(Refine())
