"""The search-provider protocol, its result type, and its two error kinds.

Transient errors (timeouts, connection drops, HTTP 429/5xx) are worth retrying;
anything else (a 4xx, a malformed answer, a missing corpus) is not, and retrying it
would only burn time. Providers raise the right one; the retry tier trusts them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from guardsearch.core.errors import RunError


class SearchError(RunError):
    """A search failed for a reason retrying will not fix."""


class TransientSearchError(SearchError):
    """A search failed for a reason that may pass: timeout, dropped connection, 429, 5xx."""


@dataclass(frozen=True, kw_only=True)
class SearchHit:
    """One retrieved source: what it says and where it lives (with its licence)."""

    title: str
    location: str
    text: str
    provider: str
    kind: str = "web"
    rank: int = 0
    score: float = 0.0
    description: str = ""
    license: str = ""
    attribution: str = ""


@runtime_checkable
class SearchProvider(Protocol):
    """Anything that answers a query with ranked hits."""

    @property
    def name(self) -> str: ...

    async def search(self, query: str, k: int) -> list[SearchHit]:
        """The best `k` hits for `query`, best first; raises SearchError/TransientSearchError."""
        ...
