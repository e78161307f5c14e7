"""PostgresRunStore: the same RunStore on PostgreSQL (psycopg 3), for shared use.

`PostgresRunStore("postgresql://user@host:5432/db")`; `schema=` keeps several
independent stores in one database (the tests use one schema per test). Migrations
take an advisory lock, so processes starting together migrate once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from guardsearch.core.errors import ConfigError
from guardsearch.store.sql import SqlRunStore

_MIGRATION_LOCK = 0x6775617264  # "guard": one advisory lock id for every guardsearch store
_SCHEMA = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class PostgresRunStore(SqlRunStore):
    """A RunStore in a PostgreSQL database (tables created and migrated on first use)."""

    placeholder = "%s"

    def __init__(self, dsn: str, *, schema: str | None = None) -> None:
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ConfigError(
                "the Postgres store needs psycopg: pip install 'guardsearch[postgres]'"
            ) from exc
        if schema is not None and not _SCHEMA.match(schema):
            raise ConfigError(f"not a valid schema name: {schema!r}")
        self.url = _hide_password(dsn) + (f" (schema {schema})" if schema else "")
        try:
            self._conn = psycopg.connect(dsn, autocommit=True)
        except psycopg.Error as exc:
            raise ConfigError(f"cannot connect to {_hide_password(dsn)}: {exc}") from exc
        self.schema = schema
        if schema is not None:
            self._conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
            self._conn.execute(f'SET search_path TO "{schema}"')
        self.migrate()

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        with self._conn.transaction(), self._conn.cursor() as cur:
            yield cur

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        with self._conn.cursor() as cur:
            yield cur

    def _for_update(self) -> str:
        return " FOR UPDATE"

    def _lock_for_migration(self, cur: Any) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))

    def close(self) -> None:
        self._conn.close()


def _hide_password(dsn: str) -> str:
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", dsn)
