"""QueryMemo: a probe query answered once is never probed again (docs/probe.md).

Not a model cache (that is `models.cache.CachedModel`, keyed by request digest): this
memo keeps the prober's `Observation`s, keyed by the normalised query (the policy's
`normalise`: lower case, sorted terms per slot, duplicates removed), so "Painter
French" and "french painter" share one entry, and a hit comes back marked memoised.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from guardsearch.loops.inner_outer.plan import Observation


@dataclass
class QueryMemo:
    """Observations by normalised query; `hits`/`misses` count lookups."""

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
