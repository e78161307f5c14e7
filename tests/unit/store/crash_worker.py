"""One session of a durable run in its own process, optionally SIGKILLed at a point.

    python3 crash_worker.py STORE RUN_ID REPLAY_LOG PAID_LEDGER KILL_AT

The model is a replay of a recorded log (a request it never saw fails the run);
every answer it gives is appended to PAID_LEDGER, the bill. The points at which the
process may die are the run's events and the SQL statements of its store (inside
checkpoint transactions too); at point KILL_AT (0: never) it sends itself SIGKILL.
The one excluded statement is the memo insert that follows a paid answer: a kill in
that instant loses the answer and would pay for it again (see runs/memo.py).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

from guardsearch import Completion, ModelRequest, ReplayModel, Trace
from guardsearch.runs import execute_run
from guardsearch.store.sqlite import SqliteRunStore


class KillSwitch:
    """Counts points; at point `at` the process dies at once (no cleanup, no flush)."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.points = 0

    def point(self, *_: Any) -> None:
        self.points += 1
        if self.points == self.at:
            os.kill(os.getpid(), signal.SIGKILL)

    def statement(self, sql: str) -> None:
        if not sql.lstrip().startswith("INSERT INTO calls"):
            self.point()

    def install(self, store: SqliteRunStore, trace: Trace) -> None:
        store.connection.set_trace_callback(self.statement)
        trace.subscribe(self.point)


class Ledger:
    """The bill: every answer the (replayed) provider gives, by request digest."""

    def __init__(self, inner: Any, path: Path) -> None:
        self.inner = inner
        self.path = path
        self.name = inner.name

    async def complete(self, request: ModelRequest) -> Completion:
        completion: Completion = await self.inner.complete(request)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(request.digest() + "\n")
        return completion


async def session(store_path: str, run_id: str, log: str, ledger: str, kill_at: int) -> str:
    store = SqliteRunStore(store_path)
    trace = Trace()
    switch = KillSwitch(kill_at)
    switch.install(store, trace)
    model = Ledger(ReplayModel(Path(log)), Path(ledger))
    record = await execute_run(run_id, store, model=model, trace=trace)  # type: ignore[arg-type]
    return record.status


if __name__ == "__main__":
    store_path, run_id, log, ledger, kill_at = sys.argv[1:6]
    print(asyncio.run(session(store_path, run_id, log, ledger, int(kill_at))))
