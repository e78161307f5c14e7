"""State compaction: keep the best results in full, summarise the rest.

Triggers: the token budget fell below `ratio` of its start, the serialised state
grew past its cap, or a synthesis is about to run (to leave the answer room).
Summaries are made in code (the first sentence, cut short), not by the model: a
summary that costs a model call would spend the very budget that ran low. The raw
texts stay in a RawStore, so citation checks still read the full source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from guardsearch.core.budget import Budget
from guardsearch.loops.research.state import ResearchState

SUMMARY_CHARS = 160
_FIRST_SENTENCE = re.compile(r"^(.+?[.!?])(?:\s|$)", re.DOTALL)


@dataclass
class RawStore:
    """The full text of every retrieved result, by id, outside the prompt state."""

    texts: dict[str, str] = field(default_factory=dict)

    def put(self, source_id: str, text: str) -> None:
        self.texts.setdefault(source_id, text)

    def get(self, source_id: str, default: str = "") -> str:
        return self.texts.get(source_id, default)


def summarise(text: str, limit: int = SUMMARY_CHARS) -> str:
    """The first sentence, at most `limit` characters."""
    flat = " ".join(text.split())
    match = _FIRST_SENTENCE.match(flat)
    first = match.group(1) if match else flat
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def compaction_reason(
    state: ResearchState,
    budget: Budget,
    *,
    ratio: float,
    token_cap: int,
    before_synthesis: bool = False,
) -> str | None:
    """Why the state should be compacted now, or None."""
    cap, left = budget.allowance.tokens, budget.remaining().tokens
    if cap and left is not None and left / cap < ratio:
        return f"token budget below {ratio:.0%} ({left} of {cap} left)"
    size = state.approx_tokens()
    if size > token_cap:
        return f"state is ~{size} tokens, over the {token_cap} cap"
    if before_synthesis:
        return "before synthesis"
    return None


def compact(state: ResearchState, keep: int) -> ResearchState:
    """Summarise every result outside the `keep` best (by rank); returns the new state."""
    active = {r.id for r in state.ranked()[:keep]}
    summaries = {
        r.id: summarise(r.text)
        for r in state.search_results
        if r.id not in active and r.id not in state.compacted
    }
    return state.with_compaction(summaries) if summaries else state
