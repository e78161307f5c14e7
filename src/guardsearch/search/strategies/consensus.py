"""consensus: N independent candidates, one reducer (a panel; a depth-1 beam).

Candidate i is a greedy rollout from the root whose proposer calls use seed offset
i x samples, so candidates differ only through explicit seeds (and temperature > 0;
at temperature 0 every candidate is the same answer). Over a one-step space a
rollout is a single call. A duplicate is not re-evaluated but still counts as a
vote for the node it repeats. The reducer (`majority_vote`, `identical`,
`judge_selection` or any callable) picks the winner; a winner that passed its guard
is a success, anything else ends `all_pruned`. Cost: N x depth expansions.

With `concurrency > 1` the root expansions of the coming rounds are prefetched
(their proposer calls run while the current round is judged and rolled out); rounds
are still committed in order, so the result is the sequential run's.
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
        if node.id == engine.tree.root_id:
            _prefetch_rounds(engine, data["round"], options.n)
        # Each candidate is an independent sample, not a retry: its own seeds, the
        # search's temperature (the schedule is for retries at one node).
        expansion = await engine.expand(
            node,
            seed_offset=data["round"] * engine.options.samples,
            temperature=engine.options.temperature,
            independent=True,
        )
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


def _prefetch_rounds(engine: Engine, first: int, n: int) -> None:
    """With concurrency > 1, start the root expansions of this round and the next ones.

    A round's root expansion depends on nothing an earlier round does (the root's
    context never changes; each round has its own seeds), so its proposer calls can
    run while earlier rounds are judged and rolled out. Rounds are still expanded and
    committed one after the other, in order: the tree, the votes and the calls are the
    sequential run's. Enough rounds ahead to fill the `concurrency` slots.
    """
    if engine.options.concurrency <= 1:
        return
    root = engine.tree.root
    for r in range(first, min(n, first + engine.lookahead)):
        if not engine.prefetch(
            root,
            seed_offset=r * engine.options.samples,
            temperature=engine.options.temperature,
            independent=True,
        ):
            break


register_strategy(Consensus())
