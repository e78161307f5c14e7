"""CorpusProber: a beam of ProbeQueries in ONE search call over the corpus index.

The variants are OR-merged into one FTS5 expression, `(v1) OR (v2) OR ...`, and one
SQL statement returns the merged top rows (BM25, title weighted 8x as in the index)
with, per row, which variants it matches, and per variant its total hit count. Each
variant's observation is its matching rows in merged order (top k) and its count.
The baseline uses `search_text`: the corpus's ordinary BM25 search of free text.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from guardsearch.apps.probe.query import ProbeQuery
from guardsearch.core.errors import ConfigError
from guardsearch.core.source import Source
from guardsearch.corpus.index import CorpusIndex
from guardsearch.loops.inner_outer.plan import Observation

_BM25 = "bm25(docs_fts, 8.0, 2.0, 1.0)"
_MERGED_ROWS = 300


def _hit(row: tuple[object, ...], position: int, k: int) -> Source:
    # The score is positional: the merged BM25 order, 1.0 for the first of k.
    return Source(
        title=str(row[0]),
        description=str(row[1]),
        text=str(row[2]),
        location=str(row[4]),
        score=1.0 - position / max(1, k),
    )


@dataclass
class CorpusProber:
    """Probes a CorpusIndex file; `calls` counts search calls (one per beam)."""

    index: CorpusIndex
    corpus: str | None = None
    k: int = 10
    calls: int = 0
    _local: threading.local = field(default_factory=threading.local, repr=False)

    @property
    def path(self) -> Path:
        return self.index.path

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
            self._local.conn = conn
        return conn

    def _probe(self, queries: Sequence[ProbeQuery], keys: Sequence[str]) -> list[Observation]:
        n = len(queries)
        members = ", ".join(
            f"d.id IN (SELECT rowid FROM docs_fts WHERE docs_fts MATCH ?{i + 1})" for i in range(n)
        )
        counts = ", ".join(
            f"(SELECT count(*) FROM docs_fts f JOIN docs c ON c.id = f.rowid "
            f"WHERE docs_fts MATCH ?{i + 1}{self._corpus_clause('c', n)})"
            for i in range(n)
        )
        sql = (
            f"SELECT d.title, d.description, d.body, d.id, d.location, {members}, {counts} "
            f"FROM docs_fts JOIN docs d ON d.id = docs_fts.rowid "
            f"WHERE docs_fts MATCH ?{n + 1}{self._corpus_clause('d', n)} "
            f"ORDER BY {_BM25} LIMIT {_MERGED_ROWS}"
        )
        expressions = [q.expression() for q in queries]
        merged = " OR ".join(f"({e})" for e in expressions)
        params: list[object] = [*expressions, merged]
        if self.corpus is not None:
            params.append(self.corpus)
        try:
            rows = self._conn().execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            raise ConfigError(f"probe query failed ({merged!r}): {exc}") from exc
        # No merged row means no variant matched anything: every count is 0.
        totals = [int(rows[0][5 + n + i]) for i in range(n)] if rows else [0] * n
        out = []
        for i, (query, key) in enumerate(zip(queries, keys, strict=True)):
            mine = [r for r in rows if r[5 + i]][: self.k]
            hits = tuple(_hit(r, p, self.k) for p, r in enumerate(mine))
            out.append(Observation(query=query, key=key, count=totals[i], hits=hits))
        return out

    def _corpus_clause(self, alias: str, n: int) -> str:
        return f" AND {alias}.corpus = ?{n + 2}" if self.corpus is not None else ""

    async def probe(self, queries: Sequence[Hashable], keys: Sequence[str]) -> list[Observation]:
        typed = [q for q in queries if isinstance(q, ProbeQuery)]
        if len(typed) != len(queries):
            raise ConfigError("CorpusProber probes ProbeQuery objects only")
        self.calls += 1
        return await asyncio.to_thread(self._probe, typed, keys)

    def _search_text(self, text: str, k: int) -> list[Source]:
        found = self.index.search(text, k, corpus=self.corpus)
        return [replace(h, score=1.0 - i / max(1, k)) for i, h in enumerate(found)]

    async def search_text(self, text: str, k: int) -> list[Source]:
        """One ordinary BM25 search of free text (what the baseline does)."""
        self.calls += 1
        return await asyncio.to_thread(self._search_text, text, k)
