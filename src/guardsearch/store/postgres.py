"""PostgresRunStore: the same RunStore on PostgreSQL (psycopg 3), for shared use.

`PostgresRunStore("postgresql://user@host:5432/db")`; `schema=` keeps several
independent stores in one database (the tests use one schema per test). Migrations
take an advisory lock, so processes starting together migrate once.

The password never leaves this module: it is split off the connection string
(store/dsn.py) and handed to psycopg apart; `url`, messages and errors show the rest.
Faults: a lost connection (reconnected before the next attempt), a lock not granted
within `lock_timeout`, a full disk, a read-only server (a failover to a replica) and
the server shutting down are transient; other database errors are permanent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from guardsearch.core.errors import ConfigError
from guardsearch.store.dsn import redact, split_secrets
from guardsearch.store.faults import Fault, FaultPolicy, store_wait
from guardsearch.store.sql import SqlRunStore

_MIGRATION_LOCK = 0x6775617264  # "guard": one advisory lock id for every guardsearch store
_SCHEMA = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
# SQLSTATE classes and codes worth waiting for: connection exceptions, transaction
# rollbacks (deadlock, serialisation), insufficient resources (disk full), operator
# intervention (shutdown); a lock not available; a read-only transaction.
_TRANSIENT_CLASSES = frozenset({"08", "40", "53", "57"})
_TRANSIENT_STATES = frozenset({"55P03", "25006"})
# How long one attempt waits for a lock; the fault policy repeats attempts.
LOCK_TIMEOUT = 5.0


class PostgresRunStore(SqlRunStore):
    """A RunStore in a PostgreSQL database (tables created and migrated on first use)."""

    placeholder = "%s"

    def __init__(self, dsn: str, *, schema: str | None = None, wait: float | None = None) -> None:
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ConfigError(
                "the Postgres store needs psycopg: pip install 'guardsearch[postgres]'"
            ) from exc
        if schema is not None and not _SCHEMA.match(schema):
            raise ConfigError(f"not a valid schema name: {schema!r}")
        self._public, self._secrets = split_secrets(dsn)
        self.url = self._public + (f" (schema {schema})" if schema else "")
        self.schema = schema
        wait = store_wait() if wait is None else wait
        self.faults = FaultPolicy(self.url, self._fault, self._recover, wait, chain=False)
        self._lock_timeout_ms = max(1, int(min(wait, LOCK_TIMEOUT) * 1000))
        try:
            self._conn = self._connect()
            failure = None
        except psycopg.Error as exc:
            failure = redact(str(exc).strip(), self._secrets)
        if failure is not None:
            # Raised outside the handler: psycopg's error keeps the connection options,
            # password included, and must not ride along as this one's context.
            raise ConfigError(f"cannot connect to {self._public}: {failure}")
        self.migrate()

    def _connect(self) -> Any:
        import psycopg
        from psycopg.conninfo import make_conninfo

        conn = psycopg.connect(make_conninfo(self._public, **self._secrets), autocommit=True)
        try:
            # A lock another session holds fails this attempt after a bounded wait
            # (then the fault policy retries) instead of blocking forever.
            conn.execute(f"SET lock_timeout = {self._lock_timeout_ms}")
            if self.schema is not None:
                conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
                conn.execute(f'SET search_path TO "{self.schema}"')
        except BaseException:
            conn.close()
            raise
        return conn

    def _fault(self, exc: BaseException) -> Fault | None:
        import psycopg

        if not isinstance(exc, psycopg.Error):
            return None
        state = exc.sqlstate or ""
        transient = (
            isinstance(exc, psycopg.OperationalError)
            or state[:2] in _TRANSIENT_CLASSES
            or state in _TRANSIENT_STATES
        )
        detail = redact(str(exc).strip() or type(exc).__name__, self._secrets)
        return Fault(detail, transient)

    def _recover(self) -> None:
        import psycopg

        if self._conn.closed or self._conn.broken:
            # Still down: the next attempt fails as a lost connection, and is retried.
            with suppress(psycopg.Error):
                self._conn = self._connect()

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        with self._conn.transaction(), self._conn.cursor() as cur:
            yield cur

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        with self._conn.cursor() as cur:
            yield cur

    def _table_exists(self, cur: Any, table: str) -> bool:
        row = cur.execute("SELECT to_regclass(%s)", (table,)).fetchone()
        return row is not None and row[0] is not None

    def _for_update(self) -> str:
        return " FOR UPDATE"

    def _lock_for_migration(self, cur: Any) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))

    def close(self) -> None:
        self._conn.close()
