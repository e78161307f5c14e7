"""SqliteRunStore: the default store, one SQLite file in WAL mode.

WAL lets readers (`guardsearch runs list` in another shell) work while a run writes;
`synchronous=NORMAL` makes each commit survive a killed process (a power cut may lose
the last few commits, never corrupt the file). Each checkpoint is one transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from guardsearch.core.errors import ConfigError
from guardsearch.store.sql import SqlRunStore


class SqliteRunStore(SqlRunStore):
    """A RunStore in one SQLite file (created, and migrated, on first use)."""

    placeholder = "?"

    def __init__(self, path: str | Path, *, synchronous: str = "NORMAL") -> None:
        self.path = Path(path).expanduser()
        self.url = str(self.path)
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ConfigError(f"unknown SQLite synchronous mode {synchronous!r}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Autocommit mode: transactions are explicit BEGIN ... COMMIT below.
            self._conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cannot open run store {self.path}: {exc}") from exc
        try:
            # SQLite opens lazily: a file that is no database (or cannot be one, like
            # /proc/version) fails here, at the first statement.
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
            self._conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise ConfigError(f"cannot open run store {self.path}: {exc}") from exc
        self.migrate()

    @property
    def connection(self) -> sqlite3.Connection:
        return self._conn

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        cur = self._conn.cursor()
        # IMMEDIATE: take the write lock up front, so two writers queue instead of
        # failing half-way with "database is locked".
        cur.execute("BEGIN IMMEDIATE")
        try:
            yield cur
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        else:
            cur.execute("COMMIT")
        finally:
            cur.close()

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        cur = self._conn.cursor()
        try:
            yield cur
        finally:
            cur.close()

    def close(self) -> None:
        self._conn.close()
