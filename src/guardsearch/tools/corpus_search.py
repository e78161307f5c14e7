"""CorpusProvider: search the offline corpora (Wikipedia by default) as a SearchProvider."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass, field

from guardsearch.corpus import CorpusIndex, CorpusInfo, open_index
from guardsearch.tools.base import SearchError, SearchHit, TransientSearchError


@dataclass
class CorpusProvider:
    """Searches `corpus` (or every corpus when None) in a CorpusIndex."""

    index: CorpusIndex | None = None
    corpus: str | None = None
    _licences: dict[str, CorpusInfo] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.index is None:
            self.index = open_index()
        if self.corpus is not None and self.index.info(self.corpus) is None:
            known = ", ".join(c.name for c in self.index.corpora()) or "none"
            raise SearchError(f"no corpus named {self.corpus!r} (known: {known})")

    @property
    def name(self) -> str:
        return f"corpus:{self.corpus}" if self.corpus else "corpus"

    def _info(self, corpus: str) -> CorpusInfo | None:
        if corpus not in self._licences:
            assert self.index is not None
            info = self.index.info(corpus)
            if info is None:
                return None
            self._licences[corpus] = info
        return self._licences[corpus]

    def _search(self, query: str, k: int) -> list[SearchHit]:
        assert self.index is not None
        try:
            hits = self.index.search(query, k, corpus=self.corpus)
        except sqlite3.OperationalError as exc:
            # "database is locked" passes; anything else is a real fault.
            if "locked" in str(exc) or "busy" in str(exc):
                raise TransientSearchError(f"corpus busy: {exc}") from exc
            raise SearchError(f"corpus search failed: {exc}") from exc
        out = []
        for hit in hits:
            info = self._info(hit.corpus)
            out.append(
                SearchHit(
                    title=hit.title,
                    location=hit.location,
                    text=hit.body,
                    description=hit.description,
                    provider=self.name,
                    kind=hit.kind,
                    rank=hit.rank,
                    score=-hit.score,  # bm25 is lower-is-better; hits are higher-is-better
                    license=info.license if info else "",
                    attribution=info.attribution if info else "",
                )
            )
        return out

    async def search(self, query: str, k: int) -> list[SearchHit]:
        # SQLite releases the GIL; a worker thread keeps the event loop free under load.
        return await asyncio.to_thread(self._search, query, k)
