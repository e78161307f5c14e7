"""Faults to break a run store with mid-run, for the store fault tests (test_faults.py).

Each fault is real where the machine allows: a lock held by another connection, a
full disk (a tiny tmpfs, filled; mounting needs root, else the store's connection is
made to fail its writes the way SQLite does on a full disk), a read-only database
(SQLite's `query_only`, which fails every write with SQLITE_READONLY as a read-only
file does; on Postgres the database turned read-only and every session cut, as a
failover to a replica does). `start()` breaks the store, `stop()` mends it.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from durable_apps import answer_for

from guardsearch import ModelRequest, ScriptedModel
from guardsearch.store.sqlite import SqliteRunStore


class Fault(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...


class Counting:
    """A strategy's scripted model that counts what it is paid for, per request digest;
    at its `at`-th call it answers, then starts `fault` (the answer has arrived and the
    memo write is next: the moment issue 19 lost an answer)."""

    name = "scripted"

    def __init__(self, strategy: str, *, at: int = 0, fault: Fault | None = None) -> None:
        self.inner = ScriptedModel(answer_for(strategy))
        self.at = at
        self.fault = fault
        self.calls = 0
        self.paid: dict[str, int] = {}

    async def complete(self, request: ModelRequest) -> Any:
        answer = await self.inner.complete(request)
        self.calls += 1
        digest = request.digest()
        self.paid[digest] = self.paid.get(digest, 0) + 1
        if self.calls == self.at and self.fault is not None:
            self.fault.start()
        return answer


class HeldLock:
    """Another connection takes the SQLite write lock and holds it for `hold` seconds
    (or until `stop`). While it holds it, a read-only open of the store reads the run
    list (unless `read` is False); `read_seconds` is how long that took."""

    def __init__(self, path: Path, hold: float, *, read: bool = True) -> None:
        self.path = path
        self.hold = hold
        self.read = read
        self.held = threading.Event()
        self.release = threading.Event()
        self.read_seconds: float | None = None
        self.runs_seen = 0
        self.thread = threading.Thread(target=self._hold, daemon=True)

    def start(self) -> None:
        self.thread.start()
        assert self.held.wait(10), "the lock was not taken"

    def stop(self) -> None:
        self.release.set()
        self.thread.join(timeout=self.hold + 30)

    def _hold(self) -> None:
        conn = sqlite3.connect(self.path, isolation_level=None, timeout=10)
        try:
            conn.execute("BEGIN IMMEDIATE")
            self.held.set()
            if self.read:
                started = time.monotonic()
                reader = SqliteRunStore(self.path, read_only=True, wait=0)
                self.runs_seen = len(reader.list_runs())
                reader.close()
                self.read_seconds = time.monotonic() - started
            self.release.wait(self.hold)
            conn.execute("COMMIT")
        finally:
            conn.close()


class FullDisk:
    """The store's file system fills up: the WAL is checkpointed down to nothing, then a
    filler file takes every free block, so the next commit cannot be written."""

    def __init__(self, store: SqliteRunStore) -> None:
        self.store = store
        self.filler = store.path.parent / "filler"

    def start(self) -> None:
        with sqlite3.connect(self.store.path, isolation_level=None) as other:
            busy, _, _ = other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        assert busy == 0, "the WAL could not be truncated"
        with self.filler.open("wb", buffering=0) as fh:
            for size in (1 << 20, 4096, 512):
                try:
                    while True:
                        fh.write(b"\0" * size)
                except OSError:
                    continue

    def stop(self) -> None:
        self.filler.unlink(missing_ok=True)


class FullConnection:
    """Where no small file system can be mounted: the store's connection, with every
    write failing as SQLite fails on a full disk (SQLITE_FULL)."""

    WRITES = ("INSERT", "UPDATE", "DELETE", "BEGIN IMMEDIATE", "CREATE", "ALTER")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def cursor(self) -> Any:
        return _FullCursor(self.conn.cursor())

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


class _FullCursor:
    def __init__(self, cur: sqlite3.Cursor) -> None:
        self.cur = cur

    def _check(self, statement: str) -> None:
        if statement.lstrip().upper().startswith(FullConnection.WRITES):
            error = sqlite3.OperationalError("database or disk is full")
            error.sqlite_errorcode = 13  # type: ignore[attr-defined]
            raise error

    def execute(self, statement: str, params: Any = ()) -> Any:
        self._check(statement)
        return self.cur.execute(statement, params)

    def executemany(self, statement: str, rows: Any) -> Any:
        self._check(statement)
        return self.cur.executemany(statement, rows)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.cur, name)


class SimulatedFullDisk:
    def __init__(self, store: SqliteRunStore) -> None:
        self.store = store
        self.real = store.connection

    def start(self) -> None:
        self.store._conn = FullConnection(self.real)  # type: ignore[assignment]

    def stop(self) -> None:
        self.store._conn = self.real


class ReadOnly:
    """The database turns read-only under the run: every write fails with SQLITE_READONLY."""

    def __init__(self, store: SqliteRunStore) -> None:
        self.store = store

    def start(self) -> None:
        self.store.connection.execute("PRAGMA query_only = ON")

    def stop(self) -> None:
        self.store.connection.execute("PRAGMA query_only = OFF")


@contextmanager
def small_disk(folder: Path) -> Iterator[bool]:
    """A 8 MB tmpfs at `folder` when this process may mount one (True), else nothing."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        yield False
        return
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    try:
        yield mounted.returncode == 0
    finally:
        if mounted.returncode == 0:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


# -- Postgres ----------------------------------------------------------------------------


class PgLock:
    """Another session locks the store's `runs` and `calls` against writes (reads go on)
    for `hold` seconds or until `stop`."""

    def __init__(self, dsn: str, schema: str, hold: float) -> None:
        self.dsn = dsn
        self.schema = schema
        self.hold = hold
        self.held = threading.Event()
        self.release = threading.Event()
        self.thread = threading.Thread(target=self._hold, daemon=True)

    def start(self) -> None:
        self.thread.start()
        assert self.held.wait(10), "the tables were not locked"

    def stop(self) -> None:
        self.release.set()
        self.thread.join(timeout=self.hold + 30)

    def _hold(self) -> None:
        import psycopg

        with psycopg.connect(self.dsn) as conn:
            conn.execute(f'SET search_path TO "{self.schema}"')
            conn.execute("LOCK TABLE runs, calls IN EXCLUSIVE MODE")
            self.held.set()
            self.release.wait(self.hold)
            conn.commit()


class PgReadOnly:
    """The store's database turns read-only and its sessions are cut (a failover to a
    replica); `stop` makes it writable and cuts them again, so the store reconnects."""

    def __init__(self, admin_dsn: str, database: str) -> None:
        self.admin_dsn = admin_dsn
        self.database = database

    def _set(self, clause: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_dsn, autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{self.database}" {clause}')
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                (self.database,),
            )

    def start(self) -> None:
        self._set("SET default_transaction_read_only = on")

    def stop(self) -> None:
        self._set("RESET default_transaction_read_only")


@contextmanager
def pg_database(admin_dsn: str) -> Iterator[tuple[str, str]]:
    """A throwaway database on the test server: (its name, its DSN)."""
    import psycopg

    name = f"gs_fault_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name, admin_dsn.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
