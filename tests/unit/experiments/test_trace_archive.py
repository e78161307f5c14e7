"""A run's traces in one `traces.jsonl.gz`: round trip, torn tails, resume, tune, pack."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import CountingExecutor
from typer.testing import CliRunner

from guardsearch.cli import app
from guardsearch.core.errors import ConfigError
from guardsearch.experiments import ExperimentConfig, ExperimentRunner, JsonlResults
from guardsearch.experiments.executors import LocalExecutor
from guardsearch.experiments.traces import (
    TraceArchive,
    TraceArchiveError,
    loose_trace_name,
    pack_loose_traces,
)

cli = CliRunner()


def events(n: int, text: str = "x") -> list[dict[str, Any]]:
    return [{"seq": i, "kind": "note", "data": {"text": f"{text}{i}"}} for i in range(n)]


def test_the_archive_round_trips_every_record_in_order(tmp_path: Path) -> None:
    archive = TraceArchive(tmp_path / "traces.jsonl.gz")
    odd = "line\u2028break, half an emoji \ud83d, and ünïcode"
    archive.append("p1|astar|t0|b20", "f1", events(3))
    archive.append("p2|astar|t0|b20", None, events(2, odd))
    archive.append("p1|astar|t0|b20", "f2", events(1))
    assert archive.events("p1|astar|t0|b20", "f1") == events(3)
    assert archive.events("p2|astar|t0|b20", None) == json.loads(json.dumps(events(2, odd)))
    assert archive.events("p1|astar|t0|b20", "f2") == events(1)
    assert archive.events("p1|astar|t0|b20", None) == []
    # A re-run trial is appended again; the later trace counts.
    archive.append("p1|astar|t0|b20", "f1", events(4))
    assert archive.events("p1|astar|t0|b20", "f1") == events(4)
    assert [r["key"] for r in archive.records()] == ["p1|astar|t0|b20", "p2|astar|t0|b20"] + [
        "p1|astar|t0|b20"
    ] * 2
    # Any gzip reader sees one JSON line per trial.
    with gzip.open(archive.path, "rt", encoding="utf-8") as fh:
        lines = [json.loads(line) for line in fh]
    assert [len(r["events"]) for r in lines] == [3, 2, 1, 4]
    assert TraceArchive(archive.path).keys() == {
        ("p1|astar|t0|b20", "f1"),
        ("p1|astar|t0|b20", "f2"),
        ("p2|astar|t0|b20", None),
    }


def test_a_torn_last_record_is_skipped_and_cut_before_the_next(tmp_path: Path) -> None:
    archive = TraceArchive(tmp_path / "traces.jsonl.gz")
    archive.append("a", None, events(5))
    whole = archive.path.read_bytes()
    archive.append("b", None, events(50))
    torn = archive.path.read_bytes()[: len(whole) + (archive.path.stat().st_size - len(whole)) // 2]
    archive.path.write_bytes(torn)  # a writer killed mid-member
    reread = TraceArchive(archive.path)
    assert [r["key"] for r in reread.records()] == ["a"]
    assert reread.events("b", None) == []
    reread.append("c", None, events(1))
    assert [r["key"] for r in TraceArchive(archive.path).records()] == ["a", "c"]
    assert archive.path.read_bytes().startswith(whole)
    with gzip.open(archive.path, "rt", encoding="utf-8") as fh:
        assert len(fh.readlines()) == 2  # no damaged member left mid-file


def test_damage_before_the_last_member_is_an_error(tmp_path: Path) -> None:
    archive = TraceArchive(tmp_path / "traces.jsonl.gz")
    archive.append("a", None, events(5))
    archive.path.write_bytes(archive.path.read_bytes() + b"not gzip at all")
    with pytest.raises(TraceArchiveError, match="damaged trace archive"):
        list(TraceArchive(archive.path).records())


def config(tmp_path: Path, model: str) -> ExperimentConfig:
    return ExperimentConfig.parse(
        {
            "name": "t",
            "suite": "game24",
            "problems": ["1 1 4 6", "4 5 6 10", "1 2 3 4"],
            "methods": ["io", "astar"],
            "model": model,
            "budgets": [20],
            "out": str(tmp_path / "out"),
        }
    )


def test_a_run_killed_while_writing_a_trace_resumes_with_that_trial(
    tmp_path: Path, fake_model: str
) -> None:
    cfg = config(tmp_path, fake_model)
    plan = ExperimentRunner(cfg).plan()
    store = JsonlResults(cfg.out_dir)
    LocalExecutor().run(plan[:3], store.save)
    # The third trial's trace was being written when the process died: its result line
    # never came, and its gzip member is cut short.
    lines = store.path.read_text("utf-8").splitlines()
    store.path.write_text("\n".join(lines[:2]) + "\n", "utf-8")
    size = store.traces.path.stat().st_size
    store.traces.path.write_bytes(store.traces.path.read_bytes()[: size - 7])
    executor = CountingExecutor()
    ExperimentRunner(cfg, executor=executor).run()
    assert executor.ran == [s.key for s in plan[2:]]
    fresh = JsonlResults(cfg.out_dir)
    results = fresh.load()
    assert len(results) == len(plan)
    for r in results:
        assert sum(e["kind"] == "model_call" for e in fresh.events(r)) == r.calls
    assert len(list(fresh.traces.records())) == len(plan)
    assert not (cfg.out_dir / "traces").exists()


def test_bench_tune_reads_the_archived_traces(tmp_path: Path, fake_model: str) -> None:
    out = tmp_path / "out"
    ran = cli.invoke(
        app,
        ["bench", "game24", "--range", "0:4", "--methods", "astar", "--model", fake_model,
         "--budget-calls", "30", "--out", str(out), "--json"],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith("game24")) == [
        "manifest.json",
        "traces.jsonl.gz",
        "trials.jsonl",
    ]
    tuned = cli.invoke(app, ["bench", "tune", str(out), "--method", "astar", "--json"])
    assert tuned.exit_code == 0, tuned.output
    proposer = json.loads(tuned.stdout)["proposer"]
    store = JsonlResults(out)
    offered = sum(
        len(e["data"].get("children") or []) + int(e["data"].get("dropped") or 0)
        for r in store.load()
        for e in store.events(r)
        if e["kind"] == "expansion" and e["data"].get("phase") == "end"
    )
    assert proposer["candidates"] == offered > 0


def write_loose_run(root: Path) -> dict[str, list[dict[str, Any]]]:
    """A run in the older layout: trials.jsonl plus traces/<hash>.jsonl per trial."""
    (root / "traces").mkdir(parents=True)
    trials = [("0900|io|t0|b60", None), ("0901|astar|t0|b60", "fp1")]
    traces: dict[str, list[dict[str, Any]]] = {}
    with (root / "trials.jsonl").open("w", encoding="utf-8") as fh:
        for i, (key, fp) in enumerate(trials):
            problem, method, _, budget = key.split("|")
            record = {"key": key, "problem": problem, "method": method, "trial": 0,
                      "budget": int(budget[1:]), "succeeded": False,
                      "termination": "wrong_answer", "fingerprint": fp, "model": "m",
                      "calls": 1, "prompt_tokens": 2, "completion_tokens": 3,
                      "cached_prompt_tokens": 0, "seconds": 0.1}  # fmt: skip
            fh.write(json.dumps(record) + "\n")
            traces[key] = events(i + 2, key)
    for key, fp in trials:
        path = root / "traces" / loose_trace_name(key, fp)
        path.write_text("".join(json.dumps(e) + "\n" for e in traces[key]), "utf-8")
    (root / "traces" / "0123456789abcdef.jsonl").write_text(json.dumps(events(1)[0]) + "\n")
    return traces


def test_the_older_loose_layout_is_refused_until_packed(tmp_path: Path) -> None:
    traces = write_loose_run(tmp_path)
    with pytest.raises(ConfigError, match="bench pack"):
        JsonlResults(tmp_path).load()
    packed = cli.invoke(app, ["bench", "pack", str(tmp_path), "--json"])
    assert packed.exit_code == 0, packed.output
    assert json.loads(packed.stdout)["packed"] == 2
    assert json.loads(packed.stdout)["unnamed"] == 1
    assert not (tmp_path / "traces").exists()
    store = JsonlResults(tmp_path)
    for r in store.load():
        assert store.events(r) == traces[r.key]
    unnamed = [r for r in store.traces.records() if r["key"] is None]
    assert unnamed == [
        {"key": None, "fingerprint": None, "file": "0123456789abcdef.jsonl", "events": events(1)}
    ]
    assert pack_loose_traces(tmp_path) == {"packed": 0, "unnamed": 0}  # nothing left to do
