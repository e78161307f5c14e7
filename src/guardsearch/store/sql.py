"""SqlRunStore: the RunStore written once in SQL that SQLite and Postgres both speak.

Backends supply a connection, a transaction context and the placeholder style; all
statements here use `?` placeholders, rewritten to `%s` for Postgres.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from guardsearch.core.errors import ConfigError
from guardsearch.store.base import (
    CheckpointRows,
    RunRecord,
    RunStatus,
    SavedTree,
    check_transition,
)
from guardsearch.store.jsonl import json_line
from guardsearch.store.migrations import LATEST, MIGRATIONS

_RUN_COLUMNS = (
    "id, name, app, strategy, status, spec, fingerprint, created_at, updated_at, calls, "
    "prompt_tokens, completion_tokens, cost, expansions, nodes, checkpoints, sessions, "
    "termination, result, error, question, paused_node, owner"
)


def dumps(value: Any) -> str:
    """Compact JSON that survives unpaired surrogates a model may emit."""
    return json_line(value)[:-1]


def owner_id() -> str:
    """Who runs a run: host and process id (a crashed owner's run may be taken over)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def new_run_id() -> str:
    return f"run-{uuid.uuid4().hex[:12]}"


class SqlRunStore:
    """Shared SQL for the RunStore protocol; subclasses connect and open transactions."""

    url: str
    placeholder = "?"

    # -- what a backend supplies -------------------------------------------------------

    def _transaction(self) -> AbstractContextManager[Any]:
        """A context manager yielding a cursor; commits on exit, rolls back on error."""
        raise NotImplementedError

    def _cursor(self) -> AbstractContextManager[Any]:
        """A cursor for autocommitted single statements and reads."""
        raise NotImplementedError

    def _lock_for_migration(self, cur: Any) -> None:
        """Serialise concurrent migrators (inside the migration transaction)."""

    def _table_exists(self, cur: Any, table: str) -> bool:
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

    def migrate(self) -> int:
        """Apply every migration this database has not seen; returns the version."""
        with self._transaction() as cur:
            self._lock_for_migration(cur)
            self._exec(
                cur,
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)",
            )
            current = self._version(cur)
            if current > LATEST:
                raise ConfigError(
                    f"store {self.url} has schema version {current}, newer than this "
                    f"guardsearch understands ({LATEST}); upgrade guardsearch"
                )
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

    def _version(self, cur: Any) -> int:
        row = self._exec(cur, "SELECT MAX(version) FROM schema_migrations").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def schema_version(self) -> int:
        with self._cursor() as cur:
            return self._version(cur)

    # -- runs --------------------------------------------------------------------------

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

    def get_run(self, run_id: str) -> RunRecord:
        with self._cursor() as cur:
            row = self._exec(
                cur, f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
        if row is None:
            raise ConfigError(f"no run {run_id!r} in {self.url}")
        return _record(row)

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
    ) -> RunRecord:
        with self._transaction() as cur:
            row = self._exec(
                cur, "SELECT status FROM runs WHERE id = ?" + self._for_update(), (run_id,)
            ).fetchone()
            if row is None:
                raise ConfigError(f"no run {run_id!r} in {self.url}")
            check_transition(run_id, row[0], status)
            self._exec(
                cur,
                "UPDATE runs SET status = ?, owner = ?, termination = ?, result = ?, error = ?, "
                "question = ?, paused_node = ?, updated_at = ?, sessions = sessions + ? "
                "WHERE id = ?",
                (
                    status,
                    owner,
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
        return self.get_run(run_id)

    def _for_update(self) -> str:
        return ""

    # -- events ------------------------------------------------------------------------

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

    def events(self, run_id: str) -> list[dict[str, Any]]:
        with self._cursor() as cur:
            rows = self._exec(
                cur,
                "SELECT seq, session, kind, at, step, node, data FROM events "
                "WHERE run_id = ? ORDER BY seq",
                (run_id,),
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

    def save_checkpoint(
        self, run_id: str, rows: CheckpointRows, events: list[dict[str, Any]]
    ) -> None:
        usage = rows.usage
        with self._transaction() as cur:
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
            self._insert_events(cur, run_id, events)
            updated = self._exec(
                cur,
                "UPDATE runs SET frontier = ?, calls = ?, prompt_tokens = ?, "
                "completion_tokens = ?, cost = ?, expansions = ?, nodes = ?, "
                "checkpoints = checkpoints + 1, updated_at = ? WHERE id = ?",
                (
                    dumps(rows.frontier),
                    int(usage.get("calls", 0)),
                    int(usage.get("prompt_tokens", 0)),
                    int(usage.get("completion_tokens", 0)),
                    float(usage.get("cost", 0.0)),
                    rows.expansions,
                    rows.node_count,
                    time.time(),
                    run_id,
                ),
            )
            if updated.rowcount == 0:
                raise ConfigError(f"no run {run_id!r} in {self.url}")

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
        return SavedTree(
            frontier=json.loads(row[0]),
            nodes=[json.loads(n[0]) for n in nodes],
            contexts={d: json.loads(c) for d, c in contexts},
            closed={k: n for k, n in closed},
        )

    # -- the memo of paid calls --------------------------------------------------------

    def recall(self, run_id: str, digest: str) -> dict[str, Any] | None:
        with self._cursor() as cur:
            row = self._exec(
                cur,
                "SELECT completion FROM calls WHERE run_id = ? AND digest = ?",
                (run_id, digest),
            ).fetchone()
        return json.loads(row[0]) if row else None

    def remember(
        self, run_id: str, digest: str, request: dict[str, Any], completion: dict[str, Any]
    ) -> None:
        # One autocommitted statement: the answer is durable the moment it returns.
        with self._cursor() as cur:
            self._exec(
                cur,
                "INSERT INTO calls (run_id, digest, request, completion, at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, digest) DO NOTHING",
                (run_id, digest, dumps(request), dumps(completion), time.time()),
            )

    def calls(self, run_id: str) -> list[dict[str, Any]]:
        with self._cursor() as cur:
            rows = self._exec(
                cur,
                "SELECT digest, request, completion, at FROM calls WHERE run_id = ? "
                "ORDER BY at, digest",
                (run_id,),
            ).fetchall()
        return [
            {
                "digest": r[0],
                "request": json.loads(r[1]),
                "completion": json.loads(r[2]),
                "at": r[3],
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
    )
