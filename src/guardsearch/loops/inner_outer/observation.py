"""What one probe of one query saw: the hit count and the top hits."""

from __future__ import annotations

import hashlib
from collections.abc import Hashable
from dataclasses import dataclass, replace


@dataclass(frozen=True, kw_only=True)
class Hit:
    """One result: a stable id, what to show, and the backend's relevance (higher better)."""

    id: str
    title: str
    description: str = ""
    text: str = ""
    location: str = ""
    relevance: float = 0.0


@dataclass(frozen=True, kw_only=True)
class Observation:
    query: Hashable
    key: str
    count: int
    hits: tuple[Hit, ...]
    from_memo: bool = False

    @property
    def result_hash(self) -> str:
        """A digest of the top 10 result ids (equal hashes: the same results came back)."""
        ids = "\n".join(h.id for h in self.hits[:10])
        return hashlib.sha256(f"{self.count}\n{ids}".encode()).hexdigest()[:16]

    def memoised(self) -> Observation:
        return replace(self, from_memo=True)
