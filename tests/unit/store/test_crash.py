"""Crash recovery: every strategy, SIGKILLed at random points, resumes to the same end.

For each strategy a reference run records its model answers (a replay log) and
counts its kill points. Then the same run, in a fresh store, goes through worker
processes (`crash_worker.py`) on the replayed model, each SIGKILLed at a random
point (an event, or any SQL statement, mid-transaction included) until a session
finishes. The finished run must equal the reference (status, result, calls), and
the bill must show every request digest answered exactly once.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from crash_worker import KillSwitch
from durable_apps import STRATEGIES, answer_for

from guardsearch import ReplayModel, ScriptedModel, Trace
from guardsearch.runs import RunSpec, create_run, execute_run
from guardsearch.store.base import RunRecord
from guardsearch.store.sqlite import SqliteRunStore

HERE = Path(__file__).resolve().parent
KILLS_PER_STRATEGY = 4
MIN_KILLS = 20
SEED = int(os.environ.get("GUARDSEARCH_CRASH_SEED", "20240611"))


def reference(strategy: str, tmp: Path) -> tuple[RunRecord, int]:
    """An unbroken run that records the replay log; its result and its kill points."""
    store = SqliteRunStore(tmp / "reference.db")
    trace = Trace()
    counter = KillSwitch(0)
    counter.install(store, trace)
    spec = RunSpec(app="durable_apps:search_app", strategy=strategy, model="replay")
    model = ReplayModel(tmp / "answers.jsonl", inner=ScriptedModel(answer_for(strategy)))
    record = asyncio.run(execute_run(create_run(spec, store).id, store, model=model, trace=trace))
    store.close()
    return record, counter.points


def worker(store: Path, run_id: str, tmp: Path, kill_at: int) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        "GUARDSEARCH_ALLOW_REAL_MODELS": "0",
    }
    args = [str(store), run_id, str(tmp / "answers.jsonl"), str(tmp / "paid.txt"), str(kill_at)]
    return subprocess.run(
        [sys.executable, str(HERE / "crash_worker.py"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_every_strategy_survives_sigkill_at_random_points(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    total_kills = 0
    for strategy in STRATEGIES:
        tmp = tmp_path / strategy
        tmp.mkdir()
        expected, points = reference(strategy, tmp)
        assert expected.status == "succeeded" and points > 20
        store_path = tmp / "crashed.db"
        store = SqliteRunStore(store_path)
        spec = RunSpec(app="durable_apps:search_app", strategy=strategy, model="replay")
        run_id = create_run(spec, store).id
        kills: list[int] = []
        for _ in range(KILLS_PER_STRATEGY + 3):
            kill_at = rng.randint(1, points // 2) if len(kills) < KILLS_PER_STRATEGY else 0
            done = worker(store_path, run_id, tmp, kill_at)
            if done.returncode == -signal.SIGKILL:
                kills.append(kill_at)
                continue
            assert done.returncode == 0, done.stderr
            break
        else:
            pytest.fail(f"{strategy}: the run never finished (kills at {kills})")
        total_kills += len(kills)
        got = store.get_run(run_id)
        assert got.status == expected.status, (strategy, kills, got.error)
        assert got.result == expected.result, (strategy, kills)
        assert got.calls == expected.calls
        assert 1 <= got.sessions <= len(kills) + 1  # a kill before "running" commits
        bill = Counter((tmp / "paid.txt").read_text().split())
        twice = {d[:12]: n for d, n in bill.items() if n > 1}
        assert not twice, f"{strategy}: paid twice for {twice} (kills at {kills})"
        assert sum(bill.values()) == len(store.calls(run_id))
        store.close()
    assert total_kills >= MIN_KILLS
