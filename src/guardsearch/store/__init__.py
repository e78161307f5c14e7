"""Durable runs: the run store (SQLite by default, Postgres)."""

from guardsearch.store.base import (
    STATUSES,
    CheckpointRows,
    NotOwner,
    RunRecord,
    RunStatus,
    RunStore,
    SavedTree,
)
from guardsearch.store.open import DB_ENV, default_store_url, open_store

__all__ = [
    "DB_ENV",
    "STATUSES",
    "CheckpointRows",
    "NotOwner",
    "RunRecord",
    "RunStatus",
    "RunStore",
    "SavedTree",
    "default_store_url",
    "open_store",
]
