"""One session of a durable run in its own process, optionally SIGKILLed at a point.

    python3 crash_worker.py STORE RUN_ID REPLAY_LOG PAID_LEDGER KILL_AT [SCHEMA]

STORE is a SQLite file or a postgresql:// DSN (with SCHEMA, the Postgres schema).
The model is a replay of a recorded log (a request it never saw fails the run);
every answer it gives is appended to PAID_LEDGER, the bill. The points at which the
process may die are the run's events and the SQL statements of its store (inside
checkpoint transactions too); at point KILL_AT (0: never) it sends itself SIGKILL.
The one excluded statement is the memo insert that follows a paid answer: a kill in
that instant loses the answer and would pay for it again (see runs/cache.py). A
session that ends prints its status and how many points it passed.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from guardsearch import Completion, ModelRequest, ReplayModel, Trace
from guardsearch.runs import execute_run
from guardsearch.store.base import RunStore
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

    def install(self, store: RunStore, trace: Trace) -> None:
        if isinstance(store, SqliteRunStore):
            store.connection.set_trace_callback(self.statement)  # every statement run
        else:  # Postgres: every statement the store sends
            run_one, run_many = store._exec, store._many  # type: ignore[attr-defined]

            def one(cur: Any, sql: str, params: Sequence[Any] = ()) -> Any:
                self.statement(sql)
                return run_one(cur, sql, params)

            def many(cur: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
                if rows:
                    self.statement(sql)
                run_many(cur, sql, rows)

            store._exec, store._many = one, many  # type: ignore[attr-defined]
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


def open_store(target: str, schema: str | None = None) -> RunStore:
    if target.startswith("postgresql://"):
        from guardsearch.store.postgres import PostgresRunStore

        return PostgresRunStore(target, schema=schema)
    return SqliteRunStore(target)


async def session(
    target: str, run_id: str, log: str, ledger: str, kill_at: int, schema: str | None = None
) -> tuple[str, int]:
    """Run one session; its final status and the number of kill points it passed."""
    store = open_store(target, schema)
    trace = Trace()
    switch = KillSwitch(kill_at)
    switch.install(store, trace)
    model = Ledger(ReplayModel(Path(log)), Path(ledger))
    record = await execute_run(run_id, store, model=model, trace=trace)  # type: ignore[arg-type]
    store.close()
    return record.status, switch.points


if __name__ == "__main__":
    target, run_id, log, ledger, kill_at = sys.argv[1:6]
    schema = sys.argv[6] if len(sys.argv) > 6 else None
    status, points = asyncio.run(session(target, run_id, log, ledger, int(kill_at), schema))
    print(status, points)
