"""`bench --store`: a trial is a running run, with its events and its tree, while it
runs (local executor), and its finished run is the one `record_trial` records."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import answer
from typer.testing import CliRunner

from guardsearch.cli import app
from guardsearch.core.events import Event
from guardsearch.experiments import trial as trial_module
from guardsearch.experiments.results import JsonlResults
from guardsearch.experiments.runlog import LiveTrial, record_trial, tree_rows
from guardsearch.models.scripted import ScriptedModel
from guardsearch.store.base import RunRecord
from guardsearch.store.sqlite import SqliteRunStore
from guardsearch.viewer.export import export_doc
from guardsearch.viewer.view import run_view

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


def test_a_live_trials_tree_is_exported_and_shown_mid_run(tmp_path: Path) -> None:
    """A bench trial's tree is rebuilt from its events, so its nodes carry no context
    digest: the export (`runs export`, the viewer's run page) of a trial that has
    flushed its first nodes must still work. It raised KeyError ('context') there,
    which the page met as a 500 whenever it opened a trial after that first flush (on a
    loaded machine; on a quiet one it opened before, while the tree was empty)."""
    db = tmp_path / "runs.db"
    store = SqliteRunStore(str(db))
    try:
        run = store.create_run(app="bench:game24", strategy="astar", spec={}, fingerprint={})
        store.transition(run.id, "running")
        live = LiveTrial(store, run.id)
        for seq, (kind, node, data) in enumerate(
            [
                ("expansion", "n0", {"phase": "start", "depth": 0}),
                ("guard_verdict", "n1", {"parent": "n0", "status": "open", "passed": True}),
                ("guard_verdict", "n2", {"parent": "n0", "status": "failed", "passed": False}),
                ("expansion", "n0", {"phase": "end"}),  # flushes
            ]
        ):
            live(Event(seq=seq, kind=kind, at=float(seq), step="steps", node=node, data=data))
        assert live.pending == []
        view = run_view(export_doc(store, run.id, calls=False))
    finally:
        store.close()
    assert [(n["id"], n["parent"], n["status"]) for n in view["nodes"]] == [
        ("n0", None, "root"),
        ("n1", "n0", "open"),
        ("n2", "n0", "failed"),
    ]
    assert view["run"]["status"] == "running" and view["last_seq"] == 3
    exported = runner.invoke(app, ["runs", "export", run.id, "--store", str(db)])
    assert exported.exit_code == 0, exported.stdout
    assert len(json.loads(exported.stdout)["state"]["nodes"]) == 3
