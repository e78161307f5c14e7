"""Durable runs: a search as a run in a store, resumable after a crash or a pause."""

from guardsearch.runs.apps import AppSetup, app_names, build_app, register_app
from guardsearch.runs.lock import LOCK_NAME, LockMismatch, check_lock, fingerprint, write_lock
from guardsearch.runs.memo import MemoModel
from guardsearch.runs.pause import AskingSpace, InputNeeded
from guardsearch.runs.runner import create_run, execute_run, resume_run, start_run, summarize
from guardsearch.runs.spec import RunSpec

__all__ = [
    "LOCK_NAME",
    "AppSetup",
    "AskingSpace",
    "InputNeeded",
    "LockMismatch",
    "MemoModel",
    "RunSpec",
    "app_names",
    "build_app",
    "check_lock",
    "create_run",
    "execute_run",
    "fingerprint",
    "register_app",
    "resume_run",
    "start_run",
    "summarize",
    "write_lock",
]
