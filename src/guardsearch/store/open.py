"""open_store: pick a RunStore from a URL, `GUARDSEARCH_DB`, or the default file.

A `postgresql://` (or `postgres://`) URL opens Postgres; anything else is a SQLite
file path. The default is `runs.db` in `GUARDSEARCH_HOME`.
"""

from __future__ import annotations

import os
from pathlib import Path

from guardsearch.paths import home
from guardsearch.store.base import RunStore
from guardsearch.store.dsn import SCHEMES

DB_ENV = "GUARDSEARCH_DB"


def default_store_url() -> str:
    return os.environ.get(DB_ENV) or str(home() / "runs.db")


def open_store(url: str | None = None, *, read_only: bool = False) -> RunStore:
    """The RunStore at `url` (default: `$GUARDSEARCH_DB`, else `GUARDSEARCH_HOME/runs.db`).

    `read_only` is for commands that only read (`runs list`, `show`, `export`, `view`):
    a SQLite file is opened without ever taking the write lock (so it opens while a
    run writes, or another process holds the lock, and when it cannot be written); a
    file that does not exist yet is created as usual. Postgres readers never wait for
    writers, and an up-to-date store of either kind is not migrated, only read.
    """
    target = url or default_store_url()
    if target.startswith(SCHEMES):
        from guardsearch.store.postgres import PostgresRunStore

        return PostgresRunStore(target)
    from guardsearch.store.sqlite import SqliteRunStore

    exists = Path(target).expanduser().exists()
    return SqliteRunStore(target, read_only=read_only and exists)
