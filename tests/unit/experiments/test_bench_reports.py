"""`bench plan`'s comparisons, hand-written notes beside a generated scorecard, and
trials recorded as runs in the run store (`--store`), on scripted models."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import result
from typer.testing import CliRunner

from guardsearch.cli import app
from guardsearch.cli.bench_plan import comparisons
from guardsearch.experiments import trial as trial_module
from guardsearch.experiments.runlog import RunStoreMirror
from guardsearch.experiments.scorecard import build_scorecard, write_scorecard
from guardsearch.models.scripted import ScriptedModel
from guardsearch.store.sqlite import SqliteRunStore

runner = CliRunner()
PLAN_PROBLEM = "bug-report-timezone"


@pytest.fixture
def babbler() -> Iterator[str]:
    """A model whose every answer is unusable: each plan pipeline fails within budget."""
    trial_module._MODELS["babble"] = ScriptedModel(lambda request: "no idea", name="babbler")
    yield "babble"
    trial_module._MODELS.pop("babble", None)


def test_plan_comparisons_include_the_full_pipeline() -> None:
    assert comparisons(["single", "full", "search", "search-blind"]) == [
        ["search", "full"],
        ["search-blind", "full"],
        ["search", "search-blind"],
    ]
    assert comparisons(["single", "search"]) == []
    # With full first it is the reference already: no duplicate pair.
    assert comparisons(["full", "search", "search-blind"]) == [["search", "search-blind"]]


def plan_report(tmp_path: Path, model: str, *extra: str) -> dict:
    result = runner.invoke(
        app,
        ["bench", "plan", "--pipelines", "single,full,search,search-blind",
         "--budgets", "2,4", "--problems", PLAN_PROBLEM, "--model", model,
         "--out", str(tmp_path / "runs"), "--report-dir", str(tmp_path / "report"),
         "--name", "plan_test", "--quiet", "--json", *extra],
    )  # fmt: skip
    assert result.exit_code == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def test_bench_plan_reports_search_vs_the_full_pipeline(tmp_path: Path, babbler: str) -> None:
    payload = plan_report(tmp_path, babbler)
    pairs = [(d["method"], d["vs"]) for d in payload["deltas"]]
    assert ("search", "full") in pairs
    assert ("search-blind", "full") in pairs
    assert ("search", "search-blind") in pairs
    assert ("full", "single") in pairs
    assert len(pairs) == len(set(pairs))
    # The report goes to --report-dir only; the run directory keeps trials and traces.
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [
        "manifest.json",
        "traces.jsonl.gz",
        "trials.jsonl",
    ]
    assert (tmp_path / "report" / "plan_test.md").exists()


def test_the_generated_report_links_the_hand_written_notes_and_keeps_them(
    tmp_path: Path, babbler: str
) -> None:
    report = tmp_path / "report"
    report.mkdir()
    notes = report / "plan_test_notes.md"
    notes.write_text("## What it shows\n\nHand-written prose.\n", encoding="utf-8")
    for _ in range(2):  # the documented command, run twice
        plan_report(tmp_path, babbler)
    card = (report / "plan_test.md").read_text(encoding="utf-8")
    assert card.startswith("# Scorecard: plan_test\n\n> ")
    assert "[plan_test_notes.md](plan_test_notes.md)" in card.splitlines()[2]
    assert "## Heuristic vs blind DFS" in card  # the plan sections are still appended
    assert notes.read_text(encoding="utf-8") == "## What it shows\n\nHand-written prose.\n"


def test_a_scorecard_without_notes_links_none(tmp_path: Path) -> None:
    card = build_scorecard(
        [result(problem="a", method="m")],
        methods=["m"],
        problems=["a"],
        budgets=[10],
        derived={},
        meta={"name": "demo"},
    )
    text = write_scorecard(card, tmp_path, "demo")["markdown"].read_text(encoding="utf-8")
    assert "_notes.md" not in text
    (tmp_path / "demo_notes.md").write_text("notes\n", encoding="utf-8")
    text = write_scorecard(card, tmp_path, "demo")["markdown"].read_text(encoding="utf-8")
    assert "[demo_notes.md](demo_notes.md)" in text


def test_bench_records_each_trial_as_a_run_in_the_store(tmp_path: Path, fake_model: str) -> None:
    db = tmp_path / "runs.db"
    args = ["bench", "game24", "--range", "0:2", "--methods", "io,astar",
            "--model", fake_model, "--budget-calls", "30", "--out", str(tmp_path / "out"),
            "--json", "--quiet"]  # fmt: skip
    first = runner.invoke(app, [*args, "--store", str(db)])
    assert first.exit_code == 0, first.stdout + first.stderr
    payload = json.loads(first.stdout)
    store = SqliteRunStore(str(db))
    try:
        runs = store.list_runs()
        assert len(runs) == 4
        assert {r.app for r in runs} == {"bench:game24"}
        assert {r.strategy for r in runs} == {"io", "astar"}
        for run in runs:
            assert run.status in ("succeeded", "failed")
            assert run.termination
            assert run.spec["model"] == fake_model
            assert run.spec["method"] in ("io", "astar")
            assert run.fingerprint["fingerprint"]
            assert run.result is not None
            assert run.calls == run.result["calls"] >= 1
            assert (run.status == "succeeded") == run.result["succeeded"]
            assert sum(e["kind"] == "model_call" for e in store.events(run.id)) == run.calls
        astar = [r for r in runs if r.strategy == "astar"]
        solved = payload["methods"]["astar"]["success_rate"] * 2
        assert sum(r.status == "succeeded" for r in astar) == solved
    finally:
        store.close()
    # Resuming runs nothing, so it records nothing new; without --store nothing is recorded.
    again = runner.invoke(app, [*args, "--store", str(db)])
    assert again.exit_code == 0, again.stdout + again.stderr
    store = SqliteRunStore(str(db))
    try:
        assert len(store.list_runs()) == 4
    finally:
        store.close()


def test_the_mirror_passes_the_manifest_and_traces_through(tmp_path: Path) -> None:
    from guardsearch.experiments import JsonlResults

    inner = JsonlResults(tmp_path)
    db = SqliteRunStore(str(tmp_path / "runs.db"))
    try:
        mirror = RunStoreMirror(inner, db, suite="game24")
        mirror.write_manifest({"io": {"fingerprint": "x", "config": {}}})
        assert mirror.manifest() == inner.manifest()
        trial = result(problem="a", method="io", fingerprint="f1", config={"model": "m"})
        event = {"seq": 0, "kind": "model_call", "at": 1.0, "step": "", "node": "", "data": {}}
        mirror.save(trial, [event])
        assert mirror.load() == [trial]
        assert mirror.events(trial) == [event]
        (run,) = db.list_runs()
        assert (run.name, run.status, run.calls) == (trial.key, "succeeded", 1)
    finally:
        db.close()
