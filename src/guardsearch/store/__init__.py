"""Durable runs: the run store (SQLite by default, Postgres)."""

from guardsearch.store.base import NotOwner, RunRecord, RunStatus, RunStore
from guardsearch.store.open import open_store

__all__ = [
    "NotOwner",
    "RunRecord",
    "RunStatus",
    "RunStore",
    "open_store",
]
