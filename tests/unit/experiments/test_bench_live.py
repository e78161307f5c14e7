"""`bench --store`: a trial is a running run, with its events and its tree, while it
runs (local executor), and its finished run is the one `record_trial` records."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import answer
from typer.testing import CliRunner

from guardsearch.cli import app
from guardsearch.experiments import trial as trial_module
from guardsearch.experiments.results import JsonlResults
from guardsearch.experiments.runlog import record_trial, tree_rows
from guardsearch.models.scripted import ScriptedModel
from guardsearch.store.base import RunRecord
from guardsearch.store.sqlite import SqliteRunStore

runner = CliRunner()


@pytest.fixture
def slow_model() -> Iterator[str]:
    """The arithmetic model, answering after 0.15 s: a trial lasts a few seconds."""
    trial_module._MODELS["slow"] = ScriptedModel(answer, name="arithmetic", delay_s=0.15)
    yield "slow"
    trial_module._MODELS.pop("slow", None)


def comparable(record: RunRecord) -> dict[str, Any]:
    """A run's record without what differs between two recordings of one trial."""
    skip = {"id", "created_at", "updated_at", "started_at", "finished_at", "checkpoints",
            "owner", "lease_until"}  # fmt: skip
    return {k: v for k, v in vars(record).items() if k not in skip}


def test_a_bench_trial_is_live_in_the_store_and_ends_as_recorded(
    tmp_path: Path, slow_model: str
) -> None:
    db, out = tmp_path / "runs.db", tmp_path / "out"
    args = ["bench", "game24", "--range", "0:1", "--methods", "astar", "--model", slow_model,
            "--budget-calls", "30", "--out", str(out), "--json", "--quiet",
            "--store", str(db)]  # fmt: skip
    done: dict[str, Any] = {}
    bench = threading.Thread(target=lambda: done.update(result=runner.invoke(app, args)))
    bench.start()
    seen: tuple[RunRecord, list[dict[str, Any]], int] | None = None
    deadline = time.monotonic() + 30
    while bench.is_alive() and time.monotonic() < deadline and seen is None:
        time.sleep(0.05)
        if not db.exists():
            continue
        store = SqliteRunStore(str(db))
        try:
            running = [r for r in store.list_runs() if r.status == "running"]
            if running:
                events = store.events(running[0].id)
                saved = store.load_checkpoint(running[0].id)
                nodes = len(saved.nodes) if saved is not None else 0
                if nodes > 1:
                    seen = running[0], events, nodes
        finally:
            store.close()
    bench.join(60)
    assert done["result"].exit_code == 0, done["result"].stdout + done["result"].stderr
    assert seen is not None, "the trial never showed up running with nodes"
    live, events, nodes = seen
    assert live.app == "bench:game24" and live.strategy == "astar"
    assert live.spec["problem"] and live.spec["method"] == "astar"
    assert live.result is None and live.calls >= 1
    assert any(e["kind"] == "expansion" for e in events)
    assert any(e["kind"] == "guard_verdict" for e in events)

    # Finished: the same run, as record_trial records the stored trial.
    store, fresh = SqliteRunStore(str(db)), SqliteRunStore(str(tmp_path / "fresh.db"))
    try:
        [run] = store.list_runs()
        assert run.id == live.id and run.status in ("succeeded", "failed")
        [result] = JsonlResults(out).load()
        trace = JsonlResults(out).events(result)
        expected = record_trial(fresh, result, trace, suite="game24")
        assert comparable(store.get_run(run.id)) == comparable(expected)
        strip = [{k: e[k] for k in ("seq", "kind", "step", "node", "data")}
                 for e in store.events(run.id)]  # fmt: skip
        assert strip == [{k: e[k] for k in ("seq", "kind", "step", "node", "data")}
                         for e in fresh.events(expected.id)]  # fmt: skip
        tree = store.load_checkpoint(run.id)
        assert tree is not None
        assert len(tree.nodes) == len(tree_rows(trace)) >= nodes
        assert run.nodes == len(tree.nodes) and run.expansions >= 1
    finally:
        store.close()
        fresh.close()
