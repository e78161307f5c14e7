"""Query memoisation: a query probed once is never paid for again (seed 003).

Keys are normalised queries (the policy's `normalise`: lower case, sorted terms per
slot, duplicates removed), so "Painter French" and "french painter" share one entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from guardsearch.loops.inner_outer.observation import Observation


@dataclass
class QueryMemo:
    entries: dict[str, Observation] = field(default_factory=dict)
    hits: int = 0
    misses: int = 0

    def get(self, key: str) -> Observation | None:
        found = self.entries.get(key)
        if found is None:
            self.misses += 1
            return None
        self.hits += 1
        return found.memoised()

    def put(self, observation: Observation) -> None:
        self.entries.setdefault(observation.key, observation)

    def __len__(self) -> int:
        return len(self.entries)
