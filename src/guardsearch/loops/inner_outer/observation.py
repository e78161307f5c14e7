"""What one probe of one query saw: the hit count and the top hits."""

from __future__ import annotations

import hashlib
from collections.abc import Hashable
from dataclasses import dataclass, replace

from guardsearch.core.source import Source


@dataclass(frozen=True, kw_only=True)
class Observation:
    query: Hashable
    key: str
    count: int
    hits: tuple[Source, ...]
    from_memo: bool = False

    @property
    def result_hash(self) -> str:
        """A digest of the top 10 result keys (equal hashes: the same results came back)."""
        ids = "\n".join(h.key for h in self.hits[:10])
        return hashlib.sha256(f"{self.count}\n{ids}".encode()).hexdigest()[:16]

    def memoised(self) -> Observation:
        return replace(self, from_memo=True)
