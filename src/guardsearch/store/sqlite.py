"""SqliteRunStore: the default store, one SQLite file in WAL mode.

WAL lets readers (`guardsearch runs list` in another shell) work while a run writes;
`synchronous=NORMAL` makes each commit survive a killed process (a power cut may lose
the last few commits, never corrupt the file). Each checkpoint is one transaction.

Faults: a lock held by another writer, a full disk, a read-only file and I/O errors
are transient (waited out, store/faults.py); anything else SQLite reports is a
permanent store error. `read_only=True` opens the file for reading only (`runs
list`, `show`, `export`, `view`): it never takes the write lock, so it works while
another process holds it, and on a file that cannot be written.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from guardsearch.core.errors import ConfigError, StoreError
from guardsearch.store.faults import Fault, FaultPolicy, store_wait
from guardsearch.store.migrations import LATEST
from guardsearch.store.sql import SqlRunStore

# Primary result codes worth waiting for: BUSY, LOCKED (another writer), READONLY,
# IOERR, FULL, CANTOPEN, PROTOCOL (a file system that came and went).
TRANSIENT_CODES = frozenset({5, 6, 8, 10, 13, 14, 15})
# While opening, only a lock is worth waiting for: nothing is paid yet, and a path
# SQLite cannot open (a directory, /proc/version) is a configuration error at once.
OPEN_TRANSIENT_CODES = frozenset({5, 6})
# How long one attempt waits for a lock; the fault policy repeats attempts.
BUSY_TIMEOUT = 5.0


class SqliteRunStore(SqlRunStore):
    """A RunStore in one SQLite file (created, and migrated, on first use)."""

    placeholder = "?"

    def __init__(
        self,
        path: str | Path,
        *,
        synchronous: str = "NORMAL",
        read_only: bool = False,
        wait: float | None = None,
    ) -> None:
        self.path = Path(path).expanduser()
        self.url = str(self.path)
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ConfigError(f"unknown SQLite synchronous mode {synchronous!r}")
        wait = store_wait() if wait is None else wait
        self.faults = FaultPolicy(self.url, self._fault, self._recover, wait)
        self.read_only = read_only
        if not read_only and self.path.exists() and not os.access(self.path, os.W_OK):
            # Found now, before any work is paid for; a file that turns read-only
            # mid-run is a transient fault instead.
            raise StoreError(
                self.url, "the file is read-only (runs list/show/export/view can still read it)"
            )
        try:
            if not read_only:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            # Autocommit mode: transactions are explicit BEGIN ... COMMIT below.
            self._conn = sqlite3.connect(
                f"{self.path.resolve().as_uri()}?mode=ro" if read_only else self.path,
                uri=read_only,
                isolation_level=None,
                timeout=min(wait, BUSY_TIMEOUT),
            )
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cannot open run store {self.path}: {exc}") from exc
        try:
            # SQLite opens lazily: a file that is no database (or cannot be one, like
            # /proc/version) fails here, at the first statement; a lock (switching an
            # old file to WAL) is waited out like any other.
            opening = FaultPolicy(self.url, self._open_fault, self._recover, wait)
            opening.run(lambda: self._set_up(synchronous.upper()))
        except StoreError as exc:
            self._conn.close()
            if exc.transient:
                raise
            raise ConfigError(f"cannot open run store {self.path}: {exc.detail}") from exc
        if read_only:
            self._check_readable()
        else:
            self.migrate()

    def _set_up(self, synchronous: str) -> None:
        if not self.read_only:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(f"PRAGMA synchronous={synchronous}")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()

    def _check_readable(self) -> None:
        if not self._has_schema() and not self._has_tables():
            self._conn.close()
            raise ConfigError(f"cannot open run store {self.path}: it is not a run store")
        version = self.schema_version() if self._has_schema() else 0
        self._check_version(version)
        if version < LATEST:
            self._conn.close()
            raise StoreError(
                self.url,
                f"schema version {version} is older than this guardsearch ({LATEST}); "
                "open it for writing once (e.g. `guardsearch runs resume`) to migrate it",
            )

    def _has_schema(self) -> bool:
        with self._cursor() as cur:
            return self._table_exists(cur, "schema_migrations")

    def _has_tables(self) -> bool:
        row = self._conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return bool(row and row[0])

    @property
    def connection(self) -> sqlite3.Connection:
        return self._conn

    def _fault(self, exc: BaseException) -> Fault | None:
        if not isinstance(exc, sqlite3.Error):
            return None
        code = getattr(exc, "sqlite_errorcode", None)
        transient = isinstance(code, int) and (code & 0xFF) in TRANSIENT_CODES
        return Fault(str(exc) or type(exc).__name__, transient)

    def _open_fault(self, exc: BaseException) -> Fault | None:
        fault = self._fault(exc)
        if fault is None:
            return None
        code = getattr(exc, "sqlite_errorcode", None)
        transient = isinstance(code, int) and (code & 0xFF) in OPEN_TRANSIENT_CODES
        return Fault(fault.detail, transient)

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        cur = self._conn.cursor()
        try:
            # IMMEDIATE: take the write lock up front, so two writers queue instead of
            # failing half-way with "database is locked".
            cur.execute("BEGIN IMMEDIATE")
            try:
                yield cur
                cur.execute("COMMIT")
            except BaseException:
                # A full disk or I/O error may have rolled the transaction back already,
                # and a failed COMMIT leaves it open: end it either way, keep the error.
                if self._conn.in_transaction:
                    with suppress(sqlite3.Error):
                        cur.execute("ROLLBACK")
                raise
        finally:
            cur.close()

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        cur = self._conn.cursor()
        try:
            yield cur
        finally:
            cur.close()

    def _table_exists(self, cur: Any, table: str) -> bool:
        found = cur.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        return found is not None

    def close(self) -> None:
        self._conn.close()
