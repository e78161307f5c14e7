"""CorpusIndex: named corpora of documents in one SQLite file, searched with FTS5 BM25.

One file holds every corpus (the embedded Wikipedia summaries and the user's own),
so a search can span all of them or be restricted to one. SQLite is in the standard
library, FTS5's BM25 is a well-understood ranking, and an index of ten thousand
summaries builds in about a second: no search server to run.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from guardsearch.core.errors import ConfigError
from guardsearch.core.source import Source
from guardsearch.corpus.documents import CorpusInfo, Document
from guardsearch.corpus.query import fts_query

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS corpora (
  name TEXT PRIMARY KEY,
  source TEXT NOT NULL DEFAULT '',
  license TEXT NOT NULL DEFAULT '',
  attribution TEXT NOT NULL DEFAULT '',
  added REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS docs (
  id INTEGER PRIMARY KEY,
  corpus TEXT NOT NULL,
  key TEXT NOT NULL,
  title TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  body TEXT NOT NULL,
  location TEXT NOT NULL DEFAULT '',
  kind TEXT NOT NULL DEFAULT 'document',
  UNIQUE (corpus, key)
);
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(
  title, description, body,
  content='docs', content_rowid='id',
  tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS docs_ai AFTER INSERT ON docs BEGIN
  INSERT INTO docs_fts(rowid, title, description, body)
  VALUES (new.id, new.title, new.description, new.body);
END;
CREATE TRIGGER IF NOT EXISTS docs_ad AFTER DELETE ON docs BEGIN
  INSERT INTO docs_fts(docs_fts, rowid, title, description, body)
  VALUES ('delete', old.id, old.title, old.description, old.body);
END;
CREATE TRIGGER IF NOT EXISTS docs_au AFTER UPDATE ON docs BEGIN
  INSERT INTO docs_fts(docs_fts, rowid, title, description, body)
  VALUES ('delete', old.id, old.title, old.description, old.body);
  INSERT INTO docs_fts(rowid, title, description, body)
  VALUES (new.id, new.title, new.description, new.body);
END;
"""

# Title matches weigh most: a question usually names its subject, and the subject's
# own article is the best source (bm25 column weights: title, description, body).
_BM25 = "bm25(docs_fts, 8.0, 2.0, 1.0)"
_BUSY_TIMEOUT_S = 120.0


class CorpusIndex:
    """An FTS5 index of named corpora. Safe to share across threads (one connection each)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._opened_lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connection() as conn:
            conn.executescript(_SCHEMA)

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, check_same_thread=False)
            # WAL lets searches read while another process is still indexing.
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
            with self._opened_lock:
                self._opened.append(conn)
        return conn

    def close(self) -> None:
        """Close every thread's connection (worker threads open their own)."""
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()
        self._local = threading.local()

    # -- writing ---------------------------------------------------------------------

    def add(
        self,
        name: str,
        documents: Iterable[Document],
        *,
        source: str = "",
        license: str = "",
        attribution: str = "",
        marker: tuple[str, str] | None = None,
        replace: Sequence[str] = (),
    ) -> int:
        """Add (or update) documents in corpus `name`; returns how many were written.

        With `marker=(key, value)`, the write happens only if meta[key] != value, and the
        marker is set in the same transaction: concurrent first uses index once.
        `replace` lists key prefixes (a file's "path#", a directory's "dir/") whose
        documents in `name` are deleted first, in the same transaction: re-adding what
        shrank or lost files leaves nothing stale behind.
        """
        _check_name(name)
        conn = self._connection()
        count = 0
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            if marker is not None:
                row = conn.execute("SELECT value FROM meta WHERE key = ?", (marker[0],)).fetchone()
                if row is not None and row[0] == marker[1]:
                    return 0
            conn.execute(
                "INSERT INTO corpora(name, source, license, attribution, added) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET "
                "source=excluded.source, license=excluded.license, "
                "attribution=excluded.attribution",
                (name, source, license, attribution, time.time()),
            )
            for prefix in replace:
                conn.execute(
                    "DELETE FROM docs WHERE corpus = ? AND substr(key, 1, ?) = ?",
                    (name, len(prefix), prefix),
                )
            for doc in documents:
                if doc.corpus != name:
                    raise ConfigError(
                        f"document {doc.key!r} belongs to {doc.corpus!r}, not {name!r}"
                    )
                conn.execute(
                    "INSERT INTO docs(corpus, key, title, description, body, location, kind) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(corpus, key) DO UPDATE SET "
                    "title=excluded.title, description=excluded.description, "
                    "body=excluded.body, location=excluded.location, kind=excluded.kind",
                    (
                        doc.corpus,
                        doc.key,
                        doc.title,
                        doc.description,
                        doc.body,
                        doc.location,
                        doc.kind,
                    ),
                )
                count += 1
            if marker is not None:
                conn.execute(
                    "INSERT INTO meta(key, value) VALUES (?, ?) "
                    "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                    marker,
                )
        return count

    def remove(self, name: str) -> int:
        """Delete a corpus and its documents; returns how many documents went."""
        conn = self._connection()
        with conn:
            cur = conn.execute("DELETE FROM docs WHERE corpus = ?", (name,))
            conn.execute("DELETE FROM corpora WHERE name = ?", (name,))
            conn.execute("DELETE FROM meta WHERE key = ?", (f"corpus:{name}",))
        return cur.rowcount

    # -- reading ---------------------------------------------------------------------

    def search(self, query: str, k: int = 5, *, corpus: str | None = None) -> list[Source]:
        """The `k` best documents for `query` (BM25), optionally within one corpus.

        Each hit's provider is `corpus:NAME` and its licence is its corpus's; `score` is
        the negated BM25, so higher is better as for every Source."""
        expression = fts_query(query)
        if not expression or k <= 0:
            return []
        sql = (
            f"SELECT d.corpus, d.title, d.description, d.body, d.location, d.kind, {_BM25}, "
            "COALESCE(c.license, ''), COALESCE(c.attribution, '') "
            "FROM docs_fts JOIN docs d ON d.id = docs_fts.rowid "
            "LEFT JOIN corpora c ON c.name = d.corpus WHERE docs_fts MATCH ?"
        )
        params: list[object] = [expression]
        if corpus is not None:
            sql += " AND d.corpus = ?"
            params.append(corpus)
        sql += f" ORDER BY {_BM25} LIMIT ?"
        params.append(k)
        rows = self._connection().execute(sql, params).fetchall()
        return [
            Source(
                provider=f"corpus:{r[0]}",
                title=r[1],
                description=r[2],
                text=r[3],
                location=r[4],
                kind=r[5],
                score=-float(r[6]),
                rank=i + 1,
                license=r[7],
                attribution=r[8],
            )
            for i, r in enumerate(rows)
        ]

    def get(self, corpus: str, key: str) -> Document | None:
        row = (
            self._connection()
            .execute(
                "SELECT title, description, body, location, kind FROM docs "
                "WHERE corpus = ? AND key = ?",
                (corpus, key),
            )
            .fetchone()
        )
        if row is None:
            return None
        return Document(
            corpus=corpus,
            key=key,
            title=row[0],
            description=row[1],
            body=row[2],
            location=row[3],
            kind=row[4],
        )

    def corpora(self) -> list[CorpusInfo]:
        rows = (
            self._connection()
            .execute(
                "SELECT c.name, c.source, c.license, c.attribution, "
                "(SELECT COUNT(*) FROM docs d WHERE d.corpus = c.name) "
                "FROM corpora c ORDER BY c.name"
            )
            .fetchall()
        )
        return [
            CorpusInfo(name=r[0], source=r[1], license=r[2], attribution=r[3], documents=r[4])
            for r in rows
        ]

    def info(self, name: str) -> CorpusInfo | None:
        return next((c for c in self.corpora() if c.name == name), None)

    def meta(self, key: str) -> str | None:
        row = self._connection().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])


def _check_name(name: str) -> None:
    if not name or not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise ConfigError(
            f"corpus name {name!r}: use letters, digits, '-', '_' or '.' (e.g. 'my-notes')"
        )
