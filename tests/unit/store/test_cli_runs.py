"""The `runs` and `lock` commands and `solve game24 --durable` on a store file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from durable_apps import asking_answer
from typer.testing import CliRunner

from guardsearch import ScriptedModel
from guardsearch.cli import app
from guardsearch.runs import RunSpec, create_run, execute_run
from guardsearch.store.sqlite import SqliteRunStore

runner = CliRunner()


def solve(tmp_path: Path, *extra: str) -> dict[str, object]:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(['{"steps": ["4 + 6"]}', '{"steps": ["10 - 5"]}']))
    result = runner.invoke(
        app,
        [
            "solve",
            "game24",
            "4 5 6 10",
            "--durable",
            "--model",
            f"scripted:{answers}",
            "--budget-calls",
            "4",
            "--quiet",
            "--json",
            *extra,
        ],
    )
    assert result.exit_code in (0, 1), result.output
    return dict(json.loads(result.stdout))


def test_runs_list_json_gives_id_status_strategy_calls_created_at(db: Path, tmp_path: Path) -> None:
    made = solve(tmp_path, "--strategy", "beam", "--name", "first")
    result = runner.invoke(app, ["runs", "list", "--json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)
    assert {"id", "status", "strategy", "calls", "created_at"} <= set(row)
    assert (row["id"], row["strategy"], row["name"]) == (made["id"], "beam", "first")
    assert row["status"] in ("succeeded", "failed") and row["calls"] == made["calls"] > 0
    assert row["created_at"].endswith("Z")


def test_runs_show_and_export_describe_one_run(db: Path, tmp_path: Path) -> None:
    made = solve(tmp_path)
    shown = runner.invoke(app, ["runs", "show", str(made["id"]), "--json"])
    data = json.loads(shown.stdout)
    assert data["spec"]["problem"] == {"numbers": "4 5 6 10", "value": False}
    assert data["paid_calls"] == data["calls"] and data["events"] > 0
    exported = runner.invoke(app, ["runs", "export", str(made["id"]), "--out", "run.json"])
    assert exported.exit_code == 0
    doc = json.loads((tmp_path / "run.json").read_text())
    assert set(doc) == {"run", "state", "events", "calls"}
    assert len(doc["state"]["nodes"]) == data["nodes"]
    missing = runner.invoke(app, ["runs", "show", "run-nope"])
    assert missing.exit_code == 2 and "no run 'run-nope'" in missing.output


def test_runs_export_takes_json_like_every_reporting_command(db: Path, tmp_path: Path) -> None:
    made = solve(tmp_path)
    exported = runner.invoke(app, ["runs", "export", str(made["id"]), "--json"])
    assert exported.exit_code == 0, exported.output
    assert json.loads(exported.stdout)["run"]["id"] == made["id"]


def test_runs_resume_answers_a_paused_run(db: Path) -> None:
    store = SqliteRunStore(db)
    spec = RunSpec(app="durable_apps:asking_app", strategy="dfs", model="scripted")
    run = create_run(spec, store).id
    asyncio.run(execute_run(run, store, model=ScriptedModel(asking_answer)))
    listed = json.loads(runner.invoke(app, ["runs", "list", "--json", "--status", "paused"]).stdout)
    assert [r["question"] for r in listed] == ["Deploy to production now?"]
    refused = runner.invoke(app, ["runs", "resume", run])  # no --input
    assert refused.exit_code == 2 and "--input TEXT" in refused.output
    cancelled = runner.invoke(app, ["runs", "cancel", run, "--json"])
    assert json.loads(cancelled.stdout)["status"] == "cancelled"


def test_runs_cancel_of_a_live_run_asks_it_to_stop(db: Path) -> None:
    import os

    from guardsearch.store.sql import owner_id

    store = SqliteRunStore(db)
    run = create_run(RunSpec(app="durable_apps:search_app", strategy="bfs"), store).id
    alive = f"{owner_id().rpartition(':')[0]}:{os.getppid()}"  # a process that runs
    store.claim(run, alive, lease=600)
    asked = runner.invoke(app, ["runs", "cancel", run])
    assert asked.exit_code == 0, asked.output
    assert f"{run} cancel requested: process {alive} stops it" in asked.stdout.replace("\n", " ")
    shown = json.loads(runner.invoke(app, ["runs", "show", run, "--json"]).stdout)
    assert (shown["status"], shown["cancel_requested"]) == ("running", True)


def test_lock_then_locked_solve_refuses_a_changed_solver(db: Path, tmp_path: Path) -> None:
    made = solve(tmp_path, "--strategy", "bfs", "--budget-tokens", "100000")
    if made["status"] != "succeeded":  # only a succeeded run can be locked
        refused = runner.invoke(app, ["lock", str(made["id"])])
        assert refused.exit_code == 2 and "only a succeeded run" in refused.output
        store = SqliteRunStore(db)
        store.transition(str(made["id"]), "running")
        store.transition(str(made["id"]), "succeeded")
    locked = runner.invoke(app, ["lock", str(made["id"])])
    assert locked.exit_code == 0, locked.output
    assert json.loads((tmp_path / "guardsearch.lock").read_text())["run"] == made["id"]
    again = solve(tmp_path, "--strategy", "bfs", "--budget-tokens", "100000", "--locked")
    assert again["strategy"] == "bfs"
    changed = runner.invoke(
        app,
        [
            "solve",
            "game24",
            "4 5 6 10",
            "--durable",
            "--locked",
            "--strategy",
            "beam",
            "--model",
            f"scripted:{tmp_path / 'answers.json'}",
            "--budget-calls",
            "4",
            "--budget-tokens",
            "100000",
        ],
    )
    assert changed.exit_code == 2
    assert 'strategy "bfs" -> "beam"' in changed.output


def test_a_durable_consensus_run_samples_with_distinct_seeds(db: Path, tmp_path: Path) -> None:
    made = solve(tmp_path, "--strategy", "consensus", "--samples", "2")
    shown = json.loads(runner.invoke(app, ["runs", "show", str(made["id"]), "--json"]).stdout)
    assert shown["spec"]["options"] == {"samples": 2}  # the temperature is the app's default
    exported = runner.invoke(app, ["runs", "export", str(made["id"]), "--json"])
    requests = [c["request"] for c in json.loads(exported.stdout)["calls"]]
    assert requests and all(r["temperature"] > 0 for r in requests)
    roots = [r for r in requests if r["messages"][-1][1].startswith("Input: 4 5 6 10\n")]
    assert [r["seed"] for r in roots] == [0, 1]  # one seed per sample
    told = solve(tmp_path, "--strategy", "consensus", "--temperature", "0")
    shown = json.loads(runner.invoke(app, ["runs", "show", str(told["id"]), "--json"]).stdout)
    assert shown["spec"]["options"] == {"temperature": 0.0}
