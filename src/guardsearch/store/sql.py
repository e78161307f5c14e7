"""SqlRunStore: the RunStore written once in SQL that SQLite and Postgres both speak.

Backends supply a connection, a transaction context, the placeholder style and what
their driver's errors mean; all statements here use `?` placeholders, rewritten to
`%s` for Postgres. Every public operation runs under the store's `FaultPolicy`
(store/faults.py): transient faults are waited out for a bounded time, and whatever
the driver raises reaches callers as a `StoreError`, never as a driver exception.
"""

from __future__ import annotations

import functools
import json
import os
import socket
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Concatenate, ParamSpec, TypeVar

from guardsearch.core.errors import ConfigError
from guardsearch.core.outcome import new_run_id
from guardsearch.jsonl import json_line
from guardsearch.store.base import (
    CheckpointRows,
    NotOwner,
    RunRecord,
    RunStatus,
    SavedTree,
    check_transition,
)
from guardsearch.store.faults import Fault, FaultPolicy
from guardsearch.store.migrations import LATEST, MIGRATIONS

_RUN_COLUMNS = (
    "id, name, app, strategy, status, spec, fingerprint, created_at, updated_at, calls, "
    "prompt_tokens, completion_tokens, cost, expansions, nodes, checkpoints, sessions, "
    "termination, result, error, question, paused_node, owner, lease_until, cancel_requested"
)


def dumps(value: Any) -> str:
    """Compact JSON that survives unpaired surrogates a model may emit."""
    return json_line(value)[:-1]


def owner_id() -> str:
    """This process: host and process id."""
    return f"{socket.gethostname()}:{os.getpid()}"


# The owners (sessions) of this process that are executing a run right now.
_LIVE_OWNERS: set[str] = set()


def new_owner() -> str:
    """A fresh owner for one session of a run: `host:pid:token`, alive until released.

    The token tells two sessions of one process apart, so two resumes of a run in one
    process compete like two processes do.
    """
    owner = f"{owner_id()}:{uuid.uuid4().hex[:8]}"
    _LIVE_OWNERS.add(owner)
    return owner


def release_owner(owner: str) -> None:
    _LIVE_OWNERS.discard(owner)


def owner_alive(owner: str | None) -> bool | None:
    """Is `owner` (`host:pid[:token]`) still running? None when this host cannot tell.

    A process on this host is checked by its pid (a session of this very process by
    its token); an owner on another host is unknown: its lease decides.
    """
    if not owner:
        return False
    parts = owner.split(":")
    if len(parts) == 3:
        host, pid, token = parts
    elif len(parts) == 2:
        (host, pid), token = parts, ""
    else:
        return None
    if host != socket.gethostname() or not pid.isdigit():
        return None
    if int(pid) == os.getpid():
        return bool(token) and owner in _LIVE_OWNERS
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def may_take_over(owner: str | None, lease_until: float | None, now: float) -> bool:
    """Whether a running run held by `owner` may be taken over (its owner is gone)."""
    alive = owner_alive(owner)
    if alive is not None:
        return not alive
    return lease_until is None or lease_until <= now


P = ParamSpec("P")
T = TypeVar("T")
S = TypeVar("S", bound="SqlRunStore")


def guarded(method: Callable[Concatenate[S, P], T]) -> Callable[Concatenate[S, P], T]:
    """Run a store operation under the store's fault policy (each attempt is the whole
    operation: a transaction that failed was rolled back, so repeating it is safe)."""

    def run(self: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self.faults.run(lambda: method(self, *args, **kwargs))

    functools.update_wrapper(run, method)
    return run


class SqlRunStore:
    """Shared SQL for the RunStore protocol; subclasses connect and open transactions."""

    url: str
    placeholder = "?"
    faults: FaultPolicy

    # -- what a backend supplies -------------------------------------------------------

    def _fault(self, exc: BaseException) -> Fault | None:
        """What a driver error means (None: `exc` is not one, let it through)."""
        raise NotImplementedError

    def _recover(self) -> None:
        """Make the next attempt possible after a transient fault (e.g. reconnect)."""

    def _transaction(self) -> AbstractContextManager[Any]:
        """A context manager yielding a cursor; commits on exit, rolls back on error."""
        raise NotImplementedError

    def _cursor(self) -> AbstractContextManager[Any]:
        """A cursor for autocommitted single statements and reads."""
        raise NotImplementedError

    def _lock_for_migration(self, cur: Any) -> None:
        """Serialise concurrent migrators (inside the migration transaction)."""

    def _table_exists(self, cur: Any, table: str) -> bool:
        """Does `table` exist (in this store's schema)?"""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # -- helpers -----------------------------------------------------------------------

    def _sql(self, statement: str) -> str:
        return statement if self.placeholder == "?" else statement.replace("?", self.placeholder)

    def _exec(self, cur: Any, statement: str, params: Sequence[Any] = ()) -> Any:
        cur.execute(self._sql(statement), tuple(params))
        return cur

    def _many(self, cur: Any, statement: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            cur.executemany(self._sql(statement), [tuple(r) for r in rows])

    # -- schema ------------------------------------------------------------------------

    @guarded
    def migrate(self) -> int:
        """Apply every migration this database has not seen; returns the version.

        An up-to-date store is only read: opening it never waits for another writer.
        """
        with self._cursor() as cur:
            seen = self._table_exists(cur, "schema_migrations")
            current = self._version(cur) if seen else 0
        self._check_version(current)
        if current == LATEST:
            return current
        with self._transaction() as cur:
            self._lock_for_migration(cur)
            self._exec(
                cur,
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)",
            )
            current = self._version(cur)  # another process may have migrated meanwhile
            self._check_version(current)
            for version, statements in MIGRATIONS:
                if version <= current:
                    continue
                for statement in statements:
                    self._exec(cur, statement)
                self._exec(
                    cur,
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                    (version, time.time()),
                )
            return max(current, LATEST)

    def _check_version(self, current: int) -> None:
        if current > LATEST:
            raise ConfigError(
                f"store {self.url} has schema version {current}, newer than this "
                f"guardsearch understands ({LATEST}); upgrade guardsearch"
            )

    def _version(self, cur: Any) -> int:
        row = self._exec(cur, "SELECT MAX(version) FROM schema_migrations").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    @guarded
    def schema_version(self) -> int:
        with self._cursor() as cur:
            return self._version(cur)

    # -- runs --------------------------------------------------------------------------

    @guarded
    def create_run(
        self,
        *,
        app: str,
        strategy: str,
        spec: dict[str, Any],
        fingerprint: dict[str, Any],
        name: str = "",
    ) -> RunRecord:
        run_id = new_run_id()
        now = time.time()
        with self._transaction() as cur:
            self._exec(
                cur,
                "INSERT INTO runs (id, name, app, strategy, status, spec, fingerprint, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, 'created', ?, ?, ?, ?)",
                (run_id, name, app, strategy, dumps(spec), dumps(fingerprint), now, now),
            )
        return self.get_run(run_id)

    @guarded
    def get_run(self, run_id: str) -> RunRecord:
        with self._cursor() as cur:
            row = self._exec(
                cur, f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
        if row is None:
            raise ConfigError(f"no run {run_id!r} in {self.url}")
        return _record(row)

    @guarded
    def list_runs(self, *, status: str | None = None, limit: int | None = None) -> list[RunRecord]:
        query = f"SELECT {_RUN_COLUMNS} FROM runs"
        params: list[Any] = []
        if status is not None:
            query += " WHERE status = ?"
            params.append(status)
        query += " ORDER BY created_at DESC, id"
        if limit is not None:
            query += " LIMIT ?"
            params.append(int(limit))
        with self._cursor() as cur:
            rows = self._exec(cur, query, params).fetchall()
        return [_record(r) for r in rows]

    @guarded
    def transition(
        self,
        run_id: str,
        status: RunStatus,
        *,
        owner: str | None = None,
        termination: str | None = None,
        result: dict[str, Any] | None = None,
        error: str | None = None,
        question: str | None = None,
        paused_node: str | None = None,
        new_session: bool = False,
        expect_owner: str | None = None,
        events: list[dict[str, Any]] | None = None,
    ) -> RunRecord:
        with self._transaction() as cur:
            current, holder, _, _ = self._lock_run(cur, run_id)
            if expect_owner is not None and (current != "running" or holder != expect_owner):
                raise NotOwner(_not_owner(run_id, expect_owner, current, holder))
            check_transition(run_id, current, status)
            if events:
                self._insert_events(cur, run_id, events)
            self._set_status(
                cur,
                run_id,
                status,
                owner=owner,
                termination=termination,
                result=result,
                error=error,
                question=question,
                paused_node=paused_node,
                new_session=new_session,
            )
        return self.get_run(run_id)

    @guarded
    def claim(
        self,
        run_id: str,
        owner: str,
        *,
        lease: float,
        expected: RunStatus | None = None,
        sessions: int | None = None,
    ) -> RunRecord:
        now = time.time()
        with self._transaction() as cur:
            current, holder, until, count = self._lock_run(cur, run_id)
            if current == "running" and holder != owner and not may_take_over(holder, until, now):
                raise ConfigError(f"run {run_id} is running in process {holder}")
            if (expected is not None and current != expected) or (
                sessions is not None and count != sessions
            ):
                raise ConfigError(
                    f"run {run_id} was resumed or changed by another process meanwhile "
                    f"(it is {current} now); try again"
                )
            check_transition(run_id, current, "running")
            self._set_status(
                cur, run_id, "running", owner=owner, lease_until=now + lease, new_session=True
            )
        return self.get_run(run_id)

    @guarded
    def cancel(self, run_id: str) -> RunRecord:
        with self._transaction() as cur:
            current, holder, until, _ = self._lock_run(cur, run_id)
            if current == "running" and not may_take_over(holder, until, time.time()):
                # The live run sees this at its next checkpoint and ends cancelled.
                self._exec(
                    cur,
                    "UPDATE runs SET cancel_requested = 1, updated_at = ? WHERE id = ?",
                    (time.time(), run_id),
                )
            else:
                check_transition(run_id, current, "cancelled")
                self._set_status(cur, run_id, "cancelled", termination="cancelled")
        return self.get_run(run_id)

    def _lock_run(self, cur: Any, run_id: str) -> tuple[str, str | None, float | None, int]:
        """The run's status, owner, lease and sessions, locked until the transaction ends."""
        row = self._exec(
            cur,
            "SELECT status, owner, lease_until, sessions FROM runs WHERE id = ?"
            + self._for_update(),
            (run_id,),
        ).fetchone()
        if row is None:
            raise ConfigError(f"no run {run_id!r} in {self.url}")
        return str(row[0]), row[1], None if row[2] is None else float(row[2]), int(row[3])

    def _set_status(
        self,
        cur: Any,
        run_id: str,
        status: RunStatus,
        *,
        owner: str | None = None,
        lease_until: float | None = None,
        termination: str | None = None,
        result: dict[str, Any] | None = None,
        error: str | None = None,
        question: str | None = None,
        paused_node: str | None = None,
        new_session: bool = False,
    ) -> None:
        self._exec(
            cur,
            "UPDATE runs SET status = ?, owner = ?, lease_until = ?, cancel_requested = 0, "
            "termination = ?, result = ?, error = ?, question = ?, paused_node = ?, "
            "updated_at = ?, sessions = sessions + ? WHERE id = ?",
            (
                status,
                owner,
                lease_until,
                termination,
                dumps(result) if result is not None else None,
                error,
                question,
                paused_node,
                time.time(),
                1 if new_session else 0,
                run_id,
            ),
        )

    def _for_update(self) -> str:
        return ""

    # -- events ------------------------------------------------------------------------

    @guarded
    def append_events(self, run_id: str, events: list[dict[str, Any]]) -> None:
        if events:
            with self._transaction() as cur:
                self._insert_events(cur, run_id, events)

    def _insert_events(self, cur: Any, run_id: str, events: list[dict[str, Any]]) -> None:
        if not events:
            return
        row = self._exec(
            cur,
            "SELECT (SELECT COALESCE(MAX(seq), -1) FROM events WHERE run_id = ?), sessions "
            "FROM runs WHERE id = ?",
            (run_id, run_id),
        ).fetchone()
        if row is None:
            raise ConfigError(f"no run {run_id!r} in {self.url}")
        first, session = int(row[0]) + 1, int(row[1])
        self._many(
            cur,
            "INSERT INTO events (run_id, seq, session, kind, at, step, node, data) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    run_id,
                    first + i,
                    session,
                    e["kind"],
                    float(e["at"]),
                    e.get("step", ""),
                    e.get("node", ""),
                    dumps(e.get("data", {})),
                )
                for i, e in enumerate(events)
            ],
        )

    @guarded
    def events(self, run_id: str, *, after: int = -1) -> list[dict[str, Any]]:
        with self._cursor() as cur:
            rows = self._exec(
                cur,
                "SELECT seq, session, kind, at, step, node, data FROM events "
                "WHERE run_id = ? AND seq > ? ORDER BY seq",
                (run_id, after),
            ).fetchall()
        return [
            {
                "seq": r[0],
                "session": r[1],
                "kind": r[2],
                "at": r[3],
                "step": r[4],
                "node": r[5],
                "data": json.loads(r[6]),
            }
            for r in rows
        ]

    # -- frontier and tree -------------------------------------------------------------

    @guarded
    def save_checkpoint(
        self,
        run_id: str,
        rows: CheckpointRows,
        events: list[dict[str, Any]],
        *,
        owner: str | None = None,
        lease: float | None = None,
    ) -> bool:
        usage = rows.usage
        now = time.time()
        with self._transaction() as cur:
            # The run row first: with an owner it is the compare-and-set that refuses a
            # process which no longer owns the run (and, on Postgres, locks the row).
            statement = (
                "UPDATE runs SET frontier = ?, calls = ?, prompt_tokens = ?, "
                "completion_tokens = ?, cost = ?, expansions = ?, nodes = ?, "
                "checkpoints = checkpoints + 1, updated_at = ?"
            )
            params: list[Any] = [
                dumps(rows.frontier),
                int(usage.get("calls", 0)),
                int(usage.get("prompt_tokens", 0)),
                int(usage.get("completion_tokens", 0)),
                float(usage.get("cost", 0.0)),
                rows.expansions,
                rows.node_count,
                now,
            ]
            if lease is not None:
                statement += ", lease_until = ?"
                params.append(now + lease)
            statement += " WHERE id = ?"
            params.append(run_id)
            if owner is not None:
                statement += " AND owner = ? AND status = 'running'"
                params.append(owner)
            updated = self._exec(cur, statement, params)
            if updated.rowcount == 0:
                found = self._exec(
                    cur, "SELECT status, owner FROM runs WHERE id = ?", (run_id,)
                ).fetchone()
                if found is None:
                    raise ConfigError(f"no run {run_id!r} in {self.url}")
                assert owner is not None
                raise NotOwner(_not_owner(run_id, owner, found[0], found[1]))
            self._many(
                cur,
                "INSERT INTO contexts (run_id, digest, data) VALUES (?, ?, ?) "
                "ON CONFLICT (run_id, digest) DO NOTHING",
                [(run_id, d, dumps(c)) for d, c in rows.contexts],
            )
            self._many(
                cur,
                "INSERT INTO nodes (run_id, id, seq, data) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (run_id, id) DO UPDATE SET data = excluded.data",
                [(run_id, ident, seq, dumps(data)) for seq, ident, data in rows.nodes],
            )
            self._many(
                cur,
                "INSERT INTO closed (run_id, key, node) VALUES (?, ?, ?) "
                "ON CONFLICT (run_id, key) DO NOTHING",
                [(run_id, key, node) for key, node in rows.closed],
            )
            self._many(
                cur,
                "DELETE FROM frontier_rows WHERE run_id = ? AND name = ?",
                [(run_id, name) for name in rows.table_resets],
            )
            self._many(
                cur,
                "DELETE FROM frontier_rows WHERE run_id = ? AND name = ? AND key = ?",
                [(run_id, name, key) for name, key in rows.table_deletes],
            )
            self._many(
                cur,
                "INSERT INTO frontier_rows (run_id, name, key, pos, data) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, name, key) "
                "DO UPDATE SET pos = excluded.pos, data = excluded.data",
                [(run_id, n, k, pos, dumps(v)) for n, k, pos, v in rows.table_rows],
            )
            self._insert_events(cur, run_id, events)
            if owner is None:
                return False
            flag = self._exec(
                cur, "SELECT cancel_requested FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
            return bool(flag[0])

    @guarded
    def load_checkpoint(self, run_id: str) -> SavedTree | None:
        with self._cursor() as cur:
            row = self._exec(cur, "SELECT frontier FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise ConfigError(f"no run {run_id!r} in {self.url}")
            if row[0] is None:
                return None
            nodes = self._exec(
                cur, "SELECT data FROM nodes WHERE run_id = ? ORDER BY seq", (run_id,)
            ).fetchall()
            contexts = self._exec(
                cur, "SELECT digest, data FROM contexts WHERE run_id = ?", (run_id,)
            ).fetchall()
            closed = self._exec(
                cur, "SELECT key, node FROM closed WHERE run_id = ?", (run_id,)
            ).fetchall()
            table_rows = self._exec(
                cur,
                "SELECT name, key, pos, data FROM frontier_rows WHERE run_id = ? "
                "ORDER BY name, pos",
                (run_id,),
            ).fetchall()
        tables: dict[str, list[tuple[str, int, Any]]] = {}
        for name, key, pos, data in table_rows:
            tables.setdefault(name, []).append((key, int(pos), json.loads(data)))
        return SavedTree(
            frontier=json.loads(row[0]),
            nodes=[json.loads(n[0]) for n in nodes],
            contexts={d: json.loads(c) for d, c in contexts},
            closed={k: n for k, n in closed},
            tables=tables,
        )

    # -- the memo of paid calls --------------------------------------------------------

    @guarded
    def recall(self, run_id: str, digest: str) -> dict[str, Any] | None:
        with self._cursor() as cur:
            row = self._exec(
                cur,
                "SELECT completion FROM calls WHERE run_id = ? AND digest = ?",
                (run_id, digest),
            ).fetchone()
        return json.loads(row[0]) if row else None

    @guarded
    def remember(
        self, run_id: str, digest: str, request: dict[str, Any], completion: dict[str, Any]
    ) -> None:
        # One autocommitted statement: the answer is durable the moment it returns. A
        # repeat keeps the first answer and counts the payment (`paid`: the bill).
        with self._cursor() as cur:
            self._exec(
                cur,
                "INSERT INTO calls (run_id, digest, request, completion, at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, digest) "
                "DO UPDATE SET paid = calls.paid + 1",
                (run_id, digest, dumps(request), dumps(completion), time.time()),
            )

    @guarded
    def calls(self, run_id: str) -> list[dict[str, Any]]:
        with self._cursor() as cur:
            rows = self._exec(
                cur,
                "SELECT digest, request, completion, at, paid FROM calls WHERE run_id = ? "
                "ORDER BY at, digest",
                (run_id,),
            ).fetchall()
        return [
            {
                "digest": r[0],
                "request": json.loads(r[1]),
                "completion": json.loads(r[2]),
                "at": r[3],
                "paid": int(r[4]),
            }
            for r in rows
        ]


def _record(row: Sequence[Any]) -> RunRecord:
    (
        ident,
        name,
        app,
        strategy,
        status,
        spec,
        fingerprint,
        created_at,
        updated_at,
        calls,
        prompt_tokens,
        completion_tokens,
        cost,
        expansions,
        nodes,
        checkpoints,
        sessions,
        termination,
        result,
        error,
        question,
        paused_node,
        owner,
        lease_until,
        cancel_requested,
    ) = row
    return RunRecord(
        id=ident,
        name=name,
        app=app,
        strategy=strategy,
        status=status,
        spec=json.loads(spec),
        fingerprint=json.loads(fingerprint),
        created_at=float(created_at),
        updated_at=float(updated_at),
        calls=int(calls),
        prompt_tokens=int(prompt_tokens),
        completion_tokens=int(completion_tokens),
        cost=float(cost),
        expansions=int(expansions),
        nodes=int(nodes),
        checkpoints=int(checkpoints),
        sessions=int(sessions),
        termination=termination,
        result=json.loads(result) if result is not None else None,
        error=error,
        question=question,
        paused_node=paused_node,
        owner=owner,
        lease_until=None if lease_until is None else float(lease_until),
        cancel_requested=bool(cancel_requested),
    )


def _not_owner(run_id: str, owner: str, status: str, holder: str | None) -> str:
    now = f"owned by {holder}" if holder else "owned by no process"
    return f"run {run_id} is no longer run by {owner}: it is {status}, {now}"
