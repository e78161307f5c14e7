"""consensus: N independent candidates, one reducer (seed 004 §2.2; a depth-1 beam).

Candidate i is a greedy rollout from the root whose proposer calls use seed offset
i x samples, so candidates differ only through explicit seeds (and temperature > 0;
at temperature 0 every candidate is the same answer). Over a one-step space a
rollout is a single call. A duplicate is not re-evaluated but still counts as a
vote for the node it repeats. The reducer (`majority_vote`, `identical`,
`judge_selection` or any callable) picks the winner; a winner that passed its guard
is a success, anything else ends `all_pruned`. Cost: N x depth expansions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from guardsearch.core.digest import canonical_json
from guardsearch.core.errors import ConfigError
from guardsearch.search.expand import Engine, order_key
from guardsearch.search.node import Node
from guardsearch.search.reducers import Reducer, Vote, get_reducer, reduce_votes
from guardsearch.search.state import Termination
from guardsearch.search.strategies.base import register_strategy


@dataclass(frozen=True, kw_only=True)
class ConsensusOptions:
    """`n` candidates; `reducer` by name or a callable over votes."""

    n: int = 5
    reducer: str | Reducer = "majority_vote"

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ConfigError(f"n must be >= 1, got {self.n}")
        get_reducer(self.reducer)  # fail fast on unknown names


def answer_key(engine: Engine, node: Node) -> str:
    """A candidate's answer, normalised for voting (whitespace-insensitive text)."""
    if node.status != "goal":
        return f"<failed:{node.id}>"
    answer: Any = engine.space.answer(node)
    if isinstance(answer, str):
        return " ".join(answer.split())
    return canonical_json(answer)


class Consensus:
    name = "consensus"
    Options = ConsensusOptions

    def start(self, engine: Engine, options: ConsensusOptions) -> None:
        engine.state.data = {"round": 0, "outcomes": [], "at": None}

    async def step(self, engine: Engine, options: ConsensusOptions) -> Termination | None:
        data = engine.state.data
        if data["at"] is None:
            if data["round"] >= options.n:
                return await self._reduce(engine, options)
            data["at"] = engine.tree.root_id
        node = engine.node(data["at"])
        expansion = await engine.expand(node, seed_offset=data["round"] * engine.options.samples)
        reached = expansion.children + [engine.node(i) for i in expansion.duplicates]
        viable = sorted((n for n in reached if n.viable), key=order_key)
        if viable and viable[0].status != "goal" and not engine.space.is_terminal(viable[0]):
            data["at"] = viable[0].id  # go on down this candidate's greedy path
            return None
        outcome = viable[0] if viable else min(reached or [node], key=order_key)
        data["outcomes"].append(outcome.id)
        data["round"] += 1
        data["at"] = None
        return None

    async def _reduce(self, engine: Engine, options: ConsensusOptions) -> Termination:
        votes = [
            Vote(engine.node(ident), answer_key(engine, engine.node(ident)), order)
            for order, ident in enumerate(engine.state.data["outcomes"])
        ]
        winner = await reduce_votes(get_reducer(options.reducer), votes)
        tally: dict[str, int] = {}
        for v in votes:
            tally[v.answer] = tally.get(v.answer, 0) + 1
        engine.trace.emit(
            "phase",
            action="reduce",
            reducer=getattr(options.reducer, "__name__", str(options.reducer)),
            votes=tally,
            winner=winner.node.id if winner else None,
        )
        if winner is None:
            return "all_pruned"
        if winner.passed:
            engine.state.goal = winner.node.id
            return "success"
        engine.state.best = winner.node.id
        return "all_pruned"


register_strategy(Consensus())
