"""Store faults mid-run (issue 19): a lock held by another connection, a full disk, a
read-only database. In each, no paid call is lost (a scripted model counts what it is
paid for across the failure and the resume: every request once), the run resumes to
the unbroken run's result, and the error is a store error, never a model error.

Each fault starts right after a model answered, before its memo write: the moment a
locked store used to lose a paid answer. SQLite and PostgreSQL (no full disk there:
the test server's disk is the machine's). The lock held a whole minute is the `slow`
variant of the short hold (same code path), run by the default `python3 -m pytest`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from durable_apps import answer_for
from store_faults import (
    Counting,
    Fault,
    FullDisk,
    HeldLock,
    PgLock,
    PgReadOnly,
    ReadOnly,
    SimulatedFullDisk,
    pg_database,
    small_disk,
)
from typer.testing import CliRunner

from guardsearch import ScriptedModel, StoreError
from guardsearch.cli import app
from guardsearch.core.outcome import stop_reason_for
from guardsearch.runs import RunSpec, create_run, execute_run
from guardsearch.runs.cache import kept_file
from guardsearch.store.base import RunRecord, RunStore
from guardsearch.store.migrations import MIGRATIONS
from guardsearch.store.postgres import PostgresRunStore
from guardsearch.store.sqlite import SqliteRunStore

SHORT_WAIT = 0.5  # how long a store waits for a fault to pass, where it must not


def spec(strategy: str) -> RunSpec:
    return RunSpec(app="durable_apps:search_app", strategy=strategy, model="scripted")


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Kept answers go to the test's own home (not the disk that fills up)."""
    folder = tmp_path / "home"
    monkeypatch.setenv("GUARDSEARCH_HOME", str(folder))
    return folder


@dataclass
class Broken:
    """A store, a fault to break it with, and how to open it again (a later process)."""

    store: RunStore
    fault: Fault
    reopen: Callable[[], RunStore]


KINDS = ["lock", "full_disk", "read_only", "pg_lock", "pg_read_only"]


@pytest.fixture
def broken(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Broken]:
    kind = request.param
    if kind == "lock":
        store = SqliteRunStore(tmp_path / "runs.db", wait=SHORT_WAIT)
        yield Broken(store, HeldLock(store.path, hold=120), lambda: SqliteRunStore(store.path))
    elif kind == "full_disk":
        with small_disk(tmp_path / "disk") as mounted:
            store = SqliteRunStore(tmp_path / "disk" / "runs.db", wait=SHORT_WAIT)
            fault = FullDisk(store) if mounted else SimulatedFullDisk(store)
            yield Broken(store, fault, lambda: SqliteRunStore(store.path))
            fault.stop()
            store.close()
    elif kind == "read_only":
        store = SqliteRunStore(tmp_path / "runs.db", wait=SHORT_WAIT)
        yield Broken(store, ReadOnly(store), lambda: SqliteRunStore(store.path))
    elif kind == "pg_lock":
        dsn = request.getfixturevalue("pg_dsn")
        schema = f"t_{uuid.uuid4().hex[:16]}"
        store = PostgresRunStore(dsn, schema=schema, wait=SHORT_WAIT)
        fault = PgLock(dsn, schema, hold=120)
        yield Broken(store, fault, lambda: PostgresRunStore(dsn, schema=schema))
        fault.stop()
        store.close()
    else:
        with pg_database(request.getfixturevalue("pg_dsn")) as (name, dsn):
            store = PostgresRunStore(dsn, wait=SHORT_WAIT)
            fault = PgReadOnly(request.getfixturevalue("pg_dsn"), name)
            yield Broken(store, fault, lambda: PostgresRunStore(dsn))
            store.close()


async def reference(strategy: str, tmp_path: Path) -> RunRecord:
    """The unbroken run."""
    store = SqliteRunStore(tmp_path / f"reference-{strategy}.db")
    run = create_run(spec(strategy), store).id
    return await execute_run(run, store, model=ScriptedModel(answer_for(strategy)))


def assert_paid_once(model: Counting, whole: RunRecord) -> None:
    assert set(model.paid.values()) == {1}, "a call was paid twice"
    assert model.calls == whole.calls, "calls were lost or repeated"


def assert_same_run(record: RunRecord, whole: RunRecord) -> None:
    assert record.status == whole.status == "succeeded", record.error
    assert record.result == whole.result
    assert record.calls == whole.calls


@pytest.mark.parametrize("broken", KINDS, indirect=True)
@pytest.mark.parametrize("strategy", ["dfs", "consensus"])
async def test_a_store_out_past_the_wait_stops_the_run_and_the_resume_pays_nothing_twice(
    broken: Broken, strategy: str, tmp_path: Path
) -> None:
    """The fault outlasts the store's wait: the run stops with a store error that says
    where the paid answers are kept; once the store is back the resume pays only what
    was never paid."""
    whole = await reference(strategy, tmp_path)
    run = create_run(spec(strategy), broken.store).id
    model = Counting(strategy, at=2, fault=broken.fault)
    with pytest.raises(StoreError) as caught:
        await execute_run(run, broken.store, model=model)
    message = str(caught.value)
    assert message.startswith("store error (")
    assert "model" not in message
    assert "resume it when the store is back" in message
    assert "kept in" in message, message
    assert stop_reason_for(caught.value) == "store_error"
    assert kept_file(broken.store, run).exists()
    broken.fault.stop()
    again = broken.reopen()
    resumed = await execute_run(run, again, model=model)
    assert_same_run(resumed, whole)
    assert_paid_once(model, whole)
    assert not kept_file(again, run).exists()
    assert {c["digest"] for c in again.calls(run)} == set(model.paid)
    again.close()


@pytest.mark.parametrize("broken", KINDS, indirect=True)
async def test_a_store_back_before_the_run_stops_records_a_store_error(
    broken: Broken, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fault outlasts the wait, the run stops, and the store is back while the
    stopping run waits for it: the paid answers and the stop (`store_error`) are
    recorded, and the resume pays nothing twice."""
    whole = await reference("dfs", tmp_path)
    run = create_run(spec("dfs"), broken.store).id
    model = Counting("dfs", at=3, fault=broken.fault)
    renew = broken.store.faults.renew

    def back_while_stopping() -> None:
        broken.fault.stop()
        renew()

    monkeypatch.setattr(broken.store.faults, "renew", back_while_stopping)
    stopped = await execute_run(run, broken.store, model=model)
    assert (stopped.status, stopped.termination) == ("failed", "store_error")
    assert stopped.error is not None and stopped.error.startswith("store error (")
    assert {c["digest"] for c in broken.store.calls(run)} == set(model.paid)
    assert not kept_file(broken.store, run).exists()
    resumed = await execute_run(run, broken.store, model=model)
    assert_same_run(resumed, whole)
    assert_paid_once(model, whole)


@pytest.mark.parametrize(
    "hold",
    [2.0, pytest.param(60.0, marks=pytest.mark.slow, id="60s")],
)
async def test_a_lock_held_mid_run_is_waited_out_and_read_only_commands_do_not_wait(
    hold: float, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another connection holds the write lock for `hold` seconds right after an answer
    arrived: the memo write waits it out (the default wait, 120 s, outlasts a minute)
    and the run goes on, paying once; meanwhile a read-only open reads at once."""
    if hold < 60:
        monkeypatch.setenv("GUARDSEARCH_STORE_WAIT", str(hold + 20))
    whole = await reference("dfs", tmp_path)
    store = SqliteRunStore(tmp_path / "runs.db")
    lock = HeldLock(store.path, hold=hold)
    run = create_run(spec("dfs"), store).id
    model = Counting("dfs", at=3, fault=lock)
    started = time.monotonic()
    record = await execute_run(run, store, model=model)
    assert time.monotonic() - started >= hold
    assert_same_run(record, whole)
    assert_paid_once(model, whole)
    assert lock.read_seconds is not None and lock.read_seconds < 2.0
    assert lock.runs_seen == 1
    lock.stop()


@pytest.mark.parametrize("hold", [3.0])
async def test_a_postgres_lock_held_mid_run_is_waited_out(
    hold: float, pg_dsn: str, tmp_path: Path
) -> None:
    """The same on Postgres: another session locks the tables; each attempt gives up
    after `lock_timeout` and the store retries until the lock is gone."""
    whole = await reference("dfs", tmp_path)
    schema = f"t_{uuid.uuid4().hex[:16]}"
    store = PostgresRunStore(pg_dsn, schema=schema, wait=hold + 20)
    lock = PgLock(pg_dsn, schema, hold=hold)
    run = create_run(spec("dfs"), store).id
    model = Counting("dfs", at=3, fault=lock)
    started = time.monotonic()
    record = await execute_run(run, store, model=model)
    assert time.monotonic() - started >= hold
    assert_same_run(record, whole)
    assert_paid_once(model, whole)
    reader = PostgresRunStore(pg_dsn, schema=schema, wait=0)
    assert reader.get_run(run).status == "succeeded"
    reader.close()
    lock.stop()
    store.close()


def old_store(path: Path, journal: str) -> None:
    """A store at schema version 1, as an older guardsearch left it."""
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA journal_mode={journal}")
        conn.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL)"
        )
        for statement in MIGRATIONS[0][1]:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_migrations VALUES (1, 0)")


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_a_migration_meets_a_locked_file_with_a_clear_error_after_a_bounded_wait(
    journal: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    old_store(path, journal)
    lock = HeldLock(path, hold=30, read=False)
    lock.start()
    try:
        started = time.monotonic()
        with pytest.raises(StoreError, match=r"store error .*database is locked"):
            SqliteRunStore(path, wait=1.0)
        assert time.monotonic() - started < 10
        monkeypatch.setenv("GUARDSEARCH_STORE_WAIT", "0.5")
        monkeypatch.setenv("GUARDSEARCH_DB", str(path))
        result = CliRunner().invoke(app, ["runs", "resume", "run-x"])
        assert result.exit_code == 1
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: store error ("), result.output
        assert "database is locked" in lines[0]
    finally:
        lock.stop()
    assert SqliteRunStore(path).schema_version() == MIGRATIONS[-1][0]  # migrates once free


def test_the_read_only_commands_work_while_another_process_holds_the_write_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "runs.db"
    store = SqliteRunStore(path)
    run = store.create_run(app="a", strategy="dfs", spec={}, fingerprint={})
    store.close()
    monkeypatch.setenv("GUARDSEARCH_DB", str(path))
    monkeypatch.setenv("GUARDSEARCH_STORE_WAIT", "30")
    monkeypatch.chdir(tmp_path)
    lock = HeldLock(path, hold=60)
    lock.start()
    try:
        runner = CliRunner()
        for args in (
            ["runs", "list", "--json"],
            ["runs", "show", run.id, "--json"],
            ["runs", "export", run.id],
            ["runs", "view", run.id],
        ):
            started = time.monotonic()
            result = runner.invoke(app, args)
            assert result.exit_code == 0, result.output
            assert time.monotonic() - started < 3.0, f"{args} waited for the write lock"
        assert json.loads(runner.invoke(app, ["runs", "list", "--json"]).stdout)[0]["id"] == run.id
    finally:
        lock.stop()


@contextmanager
def unwritable(path: Path) -> Iterator[bool]:
    """`path` made unwritable for this process (immutable as root, mode 444 otherwise);
    False when this file system cannot do it."""
    if os.geteuid() == 0:
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0
        try:
            yield done and not os.access(path, os.W_OK)
        finally:
            if done:
                subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)
    else:
        path.chmod(0o444)
        try:
            yield not os.access(path, os.W_OK)
        finally:
            path.chmod(0o644)


async def test_a_read_only_file_is_refused_for_writing_at_once_and_read_for_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "runs.db"
    store = SqliteRunStore(path)
    run = create_run(spec("dfs"), store).id
    await execute_run(run, store, model=ScriptedModel(answer_for("dfs")))
    store.close()
    monkeypatch.setenv("GUARDSEARCH_DB", str(path))
    with unwritable(path) as done:
        if not done:
            pytest.skip("this file system cannot make a file read-only for this user")
        started = time.monotonic()
        with pytest.raises(StoreError, match=r"store error .*read-only"):
            SqliteRunStore(path)  # found at open, before anything is paid: no waiting
        assert time.monotonic() - started < 2.0
        reader = SqliteRunStore(path, read_only=True)
        assert reader.get_run(run).status == "succeeded"
        reader.close()
        runner = CliRunner()
        assert runner.invoke(app, ["runs", "show", run, "--json"]).exit_code == 0
        result = runner.invoke(app, ["runs", "resume", run])
        assert result.exit_code == 1
        assert result.output.strip().startswith("error: store error (")
        assert len(result.output.strip().splitlines()) == 1


def test_a_store_error_anywhere_in_a_command_is_one_line_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fails(self: SqliteRunStore, **_: object) -> None:
        raise StoreError(self.url, "disk I/O error", transient=True)

    monkeypatch.setenv("GUARDSEARCH_DB", str(tmp_path / "runs.db"))
    monkeypatch.setattr(SqliteRunStore, "list_runs", fails)
    result = CliRunner().invoke(app, ["runs", "list"])
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit)
    assert result.output.strip().splitlines() == [
        f"error: store error ({tmp_path / 'runs.db'}): disk I/O error"
    ]
