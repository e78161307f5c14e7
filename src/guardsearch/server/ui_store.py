"""The viewer's access to the run store: one reader thread for every read, and the
threads that run a durable run (resume, start) with a connection of their own."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from guardsearch.core.errors import ConfigError, GuardsearchError
from guardsearch.models.base import Model
from guardsearch.store.base import RunRecord, RunStore
from guardsearch.store.open import open_store

log = logging.getLogger("guardsearch.server.ui")

T = TypeVar("T")


class StoreReader:
    """One thread that owns the reading connection (SQLite connections stay in the
    thread that made them); every read of the UI runs there, one at a time."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ui-store")
        self._local = threading.local()

    def _store(self) -> RunStore:
        store = getattr(self._local, "store", None)
        if store is None:
            store = self._local.store = open_store(self.url, read_only=True)
        return store

    async def read(self, fn: Callable[[RunStore], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: fn(self._store()))

    def close(self) -> None:
        def shut() -> None:
            store = getattr(self._local, "store", None)
            if store is not None:
                store.close()

        self._pool.submit(shut)
        self._pool.shutdown(wait=True)


@dataclass
class Viewer:
    """What the viewer's routes share: the store (its URL and reader), the served
    model, the runs being resumed, and the background tasks it started."""

    store_url: str
    reader: StoreReader
    model_spec: str | None = None
    model: Model | None = None
    resuming: set[str] = field(default_factory=set)
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)

    async def record(self, run_id: str) -> RunRecord | None:
        """The run's record, None for an unknown id."""
        try:
            return await self.reader.read(lambda s: s.get_run(run_id))
        except ConfigError:
            return None

    def background(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run `work` as a task the viewer keeps (the loop holds tasks only weakly)."""
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def with_store(self, fn: Callable[[RunStore], T]) -> Callable[[], T]:
        """`fn` on a connection of its own (for a thread: writes, long runs)."""

        def run() -> T:
            store = open_store(self.store_url)
            try:
                return fn(store)
            finally:
                store.close()

        return run


def resume_in_thread(url: str, run_id: str, text: str) -> None:
    """`runs resume RUN --input TEXT` in a thread of its own: its own event loop (the
    model may block) and its own connection to the store."""
    from guardsearch.runs.fleet import execute

    try:
        record = execute(url, run_id, human_input=text)
        log.info("run %s resumed from the UI: %s", run_id, record.status)
    except GuardsearchError as exc:
        log.warning("run %s: resume from the UI failed: %s", run_id, exc)
    except Exception:
        log.exception("run %s: resume from the UI failed", run_id)


def execute_in_thread(url: str, run_id: str, model: Model | None) -> None:
    """`execute_run` of a new run in a thread of its own (like `resume_in_thread`)."""
    from guardsearch.runs.fleet import execute

    try:
        record = execute(url, run_id, model=model)
        log.info("run %s started from the API: %s", run_id, record.status)
    except Exception:
        log.exception("run %s: started from the API, failed", run_id)
