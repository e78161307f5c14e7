"""Crash recovery: every strategy, SIGKILLed at random points, resumes to the same end.

For each strategy a reference run records its model answers (a replay log). Then the
same run, in a fresh store, goes through worker processes (`crash_worker.py`) on the
replayed model, each SIGKILLed at a random point of its session (an event, or any
SQL statement, mid-transaction included) until a session finishes. A kill point is
drawn over the whole session that the worker is about to run: its length is
counted first by a dry run of that very session on a copy of the store. The
finished run must equal the reference (status, result, calls), and the bill must
show every request digest answered exactly once.

SQLite: KILLS_PER_STRATEGY kills per strategy. PostgreSQL (a real server, killed
clients mid-transaction): one kill per strategy, drawn over the first session.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from crash_worker import session
from durable_apps import STRATEGIES, answer_for

from guardsearch import CachedModel, FileCache, ScriptedModel
from guardsearch.runs import RunSpec, create_run, execute_run
from guardsearch.store.base import RunRecord, RunStore
from guardsearch.store.postgres import PostgresRunStore
from guardsearch.store.sqlite import SqliteRunStore

HERE = Path(__file__).resolve().parent
KILLS_PER_STRATEGY = 4
MIN_KILLS = 20
SEED = int(os.environ.get("GUARDSEARCH_CRASH_SEED", "20240611"))
SPEC = {"app": "durable_apps:search_app", "model": "replay"}


def reference(strategy: str, tmp: Path) -> RunRecord:
    """An unbroken run that records the replay log the workers answer from."""
    store = SqliteRunStore(tmp / "reference.db")
    spec = RunSpec(strategy=strategy, **SPEC)
    model = CachedModel(ScriptedModel(answer_for(strategy)), FileCache(tmp / "answers.jsonl"))
    record = asyncio.run(execute_run(create_run(spec, store).id, store, model=model))
    store.close()
    return record


def worker(
    target: str, run_id: str, tmp: Path, kill_at: int, ledger: Path, schema: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        "GUARDSEARCH_ALLOW_REAL_MODELS": "0",
    }
    args = [target, run_id, str(tmp / "answers.jsonl"), str(ledger), str(kill_at)]
    return subprocess.run(
        [sys.executable, str(HERE / "crash_worker.py"), *args, *([schema] if schema else [])],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def dry_run(path: Path, run_id: str, tmp: Path) -> int:
    """How many kill points the next session of `run_id` has: run it on a copy."""
    copy = tmp / "dry-run.db"
    for leftover in tmp.glob("dry-run.db*"):
        leftover.unlink()
    source, target = sqlite3.connect(path), sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.close()
    _, points = asyncio.run(
        session(str(copy), run_id, str(tmp / "answers.jsonl"), str(tmp / "dry-paid.txt"), 0)
    )
    return points


def crash_until_done(
    store: RunStore,
    run_id: str,
    run_worker: Callable[[int], subprocess.CompletedProcess[str]],
    session_points: Callable[[], int],
    kills_wanted: int,
    rng: random.Random,
) -> list[int]:
    """Kill workers at random points of their sessions, then let one finish."""
    kills: list[int] = []
    for _ in range(kills_wanted + 3):
        kill_at = rng.randint(1, session_points()) if len(kills) < kills_wanted else 0
        done = run_worker(kill_at)
        if done.returncode == -signal.SIGKILL:
            kills.append(kill_at)
            if store.get_run(run_id).status == "succeeded":
                break  # killed after its end was committed: nothing left to do
            continue
        assert done.returncode == 0, done.stderr
        assert done.stdout.split()[0] == "succeeded", done.stdout
        break
    else:
        pytest.fail(f"the run never finished (kills at {kills})")
    return kills


def check_parity(
    store: RunStore, run_id: str, expected: RunRecord, kills: list[int], bill_file: Path
) -> None:
    got = store.get_run(run_id)
    assert got.status == expected.status, (kills, got.error)
    assert got.result == expected.result, kills
    assert got.calls == expected.calls
    assert 1 <= got.sessions <= len(kills) + 1  # a kill before "running" commits
    bill = Counter(bill_file.read_text().split()) if bill_file.exists() else Counter()
    twice = {d[:12]: n for d, n in bill.items() if n > 1}
    assert not twice, f"paid twice for {twice} (kills at {kills})"
    assert sum(bill.values()) == len(store.calls(run_id))


def crash_on_sqlite(strategy: str, tmp: Path, rng: random.Random) -> int:
    """One strategy's crashed run on SQLite, checked against the reference; its kills."""
    expected = reference(strategy, tmp)
    assert expected.status == "succeeded"
    path = tmp / "crashed.db"
    store = SqliteRunStore(path)
    run_id = create_run(RunSpec(strategy=strategy, **SPEC), store).id
    lengths: list[int] = []

    def points() -> int:
        lengths.append(dry_run(path, run_id, tmp))
        return lengths[-1]

    def run_worker(kill_at: int) -> subprocess.CompletedProcess[str]:
        return worker(str(path), run_id, tmp, kill_at, tmp / "paid.txt")

    kills = crash_until_done(store, run_id, run_worker, points, KILLS_PER_STRATEGY, rng)
    assert lengths[0] > 20  # a whole first session has many points
    check_parity(store, run_id, expected, kills, tmp / "paid.txt")
    store.close()
    return len(kills)


def test_every_strategy_survives_sigkill_at_random_points(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    total_kills = 0
    for strategy in STRATEGIES:
        (tmp_path / strategy).mkdir()
        total_kills += crash_on_sqlite(strategy, tmp_path / strategy, rng)
    assert total_kills >= MIN_KILLS
    print(f"SQLite: {total_kills} kills over {len(STRATEGIES)} strategies")


def crash_on_postgres(strategy: str, tmp: Path, rng: random.Random, dsn: str) -> int:
    """One strategy's crashed run on PostgreSQL, checked against the reference; its kills."""
    expected = reference(strategy, tmp)
    schema = f"crash_{uuid.uuid4().hex[:12]}"
    store = PostgresRunStore(dsn, schema=schema)
    spec = RunSpec(strategy=strategy, **SPEC)
    # A whole first session, counted in this process: every fresh run's is the same.
    log, ledger = str(tmp / "answers.jsonl"), tmp / "paid.txt"
    status, length = asyncio.run(
        session(dsn, create_run(spec, store).id, log, str(tmp / "count-paid.txt"), 0, schema)
    )
    assert status == "succeeded" and length > 20
    run_id = create_run(spec, store).id

    def run_worker(kill_at: int) -> subprocess.CompletedProcess[str]:
        return worker(dsn, run_id, tmp, kill_at, ledger, schema)

    kills = crash_until_done(store, run_id, run_worker, lambda: length, 1, rng)
    check_parity(store, run_id, expected, kills, ledger)
    store.close()
    return len(kills)


def test_every_strategy_survives_sigkill_on_postgres(tmp_path: Path, pg_dsn: str) -> None:
    rng = random.Random(SEED + 1)
    total_kills = 0
    for strategy in STRATEGIES:
        (tmp_path / strategy).mkdir()
        total_kills += crash_on_postgres(strategy, tmp_path / strategy, rng, pg_dsn)
    assert total_kills == len(STRATEGIES)
    print(f"PostgreSQL: {total_kills} kills over {len(STRATEGIES)} strategies")
