"""Consensus reducers: pick one winner from N candidates.

Each reducer takes the candidates' votes in the order they were produced and
returns the winning vote, or None when there is no consensus. Ties are broken the
same way everywhere, so a result never depends on dict or set ordering:

- `majority_vote`: the answer most candidates gave (passing candidates only, if
  any passed); ties -> the higher best score -> the answer that appeared first.
- `identical` ("code consensus"): an output that at least `quorum` candidates
  produced character for character (default: more than half); ties -> first seen.
- `judge_selection`: the distinct answer the multi-signal evaluator scores highest
  (its verdict from the search, or a fresh one from `judge`); passing beats failing;
  ties -> more votes -> first seen.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from guardsearch.core.errors import ConfigError
from guardsearch.core.guard_result import GuardResult
from guardsearch.guards.base import Guard
from guardsearch.search.node import Node


@dataclass(frozen=True)
class Vote:
    """One candidate: its node, its normalised answer, and when it was produced."""

    node: Node
    answer: str
    order: int

    @property
    def passed(self) -> bool:
        return self.node.status == "goal"

    @property
    def score(self) -> float:
        s = self.node.score
        return s if s is not None else (1.0 if self.passed else 0.0)


Reducer = Callable[[Sequence[Vote]], "Vote | Awaitable[Vote | None] | None"]


def groups(votes: Sequence[Vote], key: Callable[[Vote], str]) -> list[list[Vote]]:
    """Votes grouped by `key`, groups in order of first appearance."""
    out: dict[str, list[Vote]] = {}
    for vote in sorted(votes, key=lambda v: v.order):
        out.setdefault(key(vote), []).append(vote)
    return list(out.values())


def _representative(group: list[Vote]) -> Vote:
    return min(group, key=lambda v: (-v.score, v.order))


def majority_vote(votes: Sequence[Vote]) -> Vote | None:
    """The most common answer; ties -> higher best score -> first appearance."""
    pool = [v for v in votes if v.passed] or list(votes)
    if not pool:
        return None
    ranked = groups(pool, lambda v: v.answer)
    best = min(
        ranked,
        key=lambda g: (-len(g), -max(v.score for v in g), min(v.order for v in g)),
    )
    return _representative(best)


def identical(quorum: int | None = None) -> Reducer:
    """Code consensus: an output produced identically by at least `quorum` candidates."""
    if quorum is not None and quorum < 1:
        raise ConfigError(f"quorum must be >= 1, got {quorum}")

    def reduce(votes: Sequence[Vote]) -> Vote | None:
        if not votes:
            return None
        need = quorum if quorum is not None else len(votes) // 2 + 1
        ranked = groups(votes, lambda v: v.node.text.strip())
        winners = [g for g in ranked if len(g) >= need]
        if not winners:
            return None
        best = min(winners, key=lambda g: (-len(g), min(v.order for v in g)))
        return _representative(best)

    reduce.__name__ = "identical"
    return reduce


def judge_selection(judge: Guard | None = None) -> Reducer:
    """The best distinct answer by the evaluator's score (re-judged by `judge` if given)."""

    async def reduce(votes: Sequence[Vote]) -> Vote | None:
        if not votes:
            return None
        scored: list[tuple[bool, float, int, int, Vote]] = []
        for group in groups(votes, lambda v: v.answer):
            vote = _representative(group)
            passed, score = vote.passed, vote.score
            if judge is not None and vote.node.parse_error is None:
                verdict: GuardResult = await judge.check(vote.node.artifact(), vote.node.context)
                passed = passed and verdict.passed
                score = verdict.score if verdict.score is not None else float(verdict.passed)
            scored.append((passed, score, len(group), -min(v.order for v in group), vote))
        best = max(scored, key=lambda t: t[:4])
        return best[4]

    reduce.__name__ = "judge_selection"
    return reduce


REDUCERS: dict[str, Callable[[], Reducer]] = {
    "majority_vote": lambda: majority_vote,
    "identical": identical,
    "code_consensus": identical,
    "judge_selection": judge_selection,
}


def get_reducer(reducer: str | Reducer) -> Reducer:
    if callable(reducer):
        return reducer
    try:
        return REDUCERS[reducer]()
    except KeyError:
        known = ", ".join(sorted(REDUCERS))
        raise ConfigError(f"unknown reducer {reducer!r}; choose one of: {known}") from None


async def reduce_votes(reducer: Reducer, votes: Sequence[Vote]) -> Vote | None:
    out = reducer(votes)
    if inspect.isawaitable(out):
        out = await out
    return out
