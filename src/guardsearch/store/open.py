"""open_store: pick a RunStore from a URL, `GUARDSEARCH_DB`, or the default file.

A `postgresql://` (or `postgres://`) URL opens Postgres; anything else is a SQLite
file path. The default is `runs.db` in `GUARDSEARCH_HOME`.
"""

from __future__ import annotations

import os

from guardsearch.paths import home
from guardsearch.store.base import RunStore

DB_ENV = "GUARDSEARCH_DB"


def default_store_url() -> str:
    return os.environ.get(DB_ENV) or str(home() / "runs.db")


def open_store(url: str | None = None) -> RunStore:
    """The RunStore at `url` (default: `$GUARDSEARCH_DB`, else `GUARDSEARCH_HOME/runs.db`)."""
    target = url or default_store_url()
    if target.startswith(("postgresql://", "postgres://")):
        from guardsearch.store.postgres import PostgresRunStore

        return PostgresRunStore(target)
    from guardsearch.store.sqlite import SqliteRunStore

    return SqliteRunStore(target)
