"""Durable runs: a search as a run in a store, resumable after a crash or a pause."""

from guardsearch.runs.cache import RunStoreCache
from guardsearch.runs.lock import LockMismatch, check_lock, fingerprint, write_lock
from guardsearch.runs.pause import InputNeeded
from guardsearch.runs.runner import create_run, execute_run, resume_run, start_run
from guardsearch.runs.spec import RunSpec

__all__ = [
    "InputNeeded",
    "LockMismatch",
    "RunSpec",
    "RunStoreCache",
    "check_lock",
    "create_run",
    "execute_run",
    "fingerprint",
    "resume_run",
    "start_run",
    "write_lock",
]
