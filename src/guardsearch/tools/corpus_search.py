"""CorpusProvider: search the offline corpora (Wikipedia by default) as a SearchProvider."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass, replace

from guardsearch.core.source import Source
from guardsearch.corpus import CorpusIndex, open_index
from guardsearch.tools.base import SearchError, TransientSearchError


@dataclass
class CorpusProvider:
    """Searches `corpus` (or every corpus when None) in a CorpusIndex."""

    index: CorpusIndex | None = None
    corpus: str | None = None

    def __post_init__(self) -> None:
        if self.index is None:
            self.index = open_index()
        if self.corpus is not None and self.index.info(self.corpus) is None:
            known = ", ".join(c.name for c in self.index.corpora()) or "none"
            raise SearchError(f"no corpus named {self.corpus!r} (known: {known})")

    @property
    def name(self) -> str:
        return f"corpus:{self.corpus}" if self.corpus else "corpus"

    def _search(self, query: str, k: int) -> list[Source]:
        assert self.index is not None
        try:
            hits = self.index.search(query, k, corpus=self.corpus)
        except sqlite3.OperationalError as exc:
            # "database is locked" passes; anything else is a real fault.
            if "locked" in str(exc) or "busy" in str(exc):
                raise TransientSearchError(f"corpus busy: {exc}") from exc
            raise SearchError(f"corpus search failed: {exc}") from exc
        # The index names each hit's own corpus; the run reports the provider it asked.
        return [replace(hit, provider=self.name) for hit in hits]

    async def search(self, query: str, k: int) -> list[Source]:
        # SQLite releases the GIL; a worker thread keeps the event loop free under load.
        return await asyncio.to_thread(self._search, query, k)
