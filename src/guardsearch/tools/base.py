"""The search-provider protocol and its two error kinds (its hits are core Sources).

Transient errors (timeouts, connection drops, HTTP 429/5xx) are worth retrying;
anything else (a 4xx, a malformed answer, a missing corpus) is not, and retrying it
would only burn time. Providers raise the right one; the retry tier trusts them.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from guardsearch.core.errors import RunError
from guardsearch.core.source import Source


class SearchError(RunError):
    """A search failed for a reason retrying will not fix."""


class TransientSearchError(SearchError):
    """A search failed for a reason that may pass: timeout, dropped connection, 429, 5xx."""


@runtime_checkable
class SearchProvider(Protocol):
    """Anything that answers a query with ranked hits."""

    @property
    def name(self) -> str: ...

    async def search(self, query: str, k: int) -> list[Source]:
        """The best `k` hits for `query`, best first; raises SearchError/TransientSearchError."""
        ...
