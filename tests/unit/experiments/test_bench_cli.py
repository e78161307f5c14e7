"""`guardsearch bench ...`: the JSON contract, YAML runs, tune and distill, usage errors."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from guardsearch.cli import app
from guardsearch.cli.bench import JSON_FIELDS

runner = CliRunner()


def bench(tmp_path: Path, model: str, *extra: str) -> dict:
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        ["bench", "game24", "--range", "0:4", "--methods", "io,astar", "--model", model,
         "--budget-calls", "30", "--out", str(out), "--json", *extra],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_bench_game24_json_has_the_contract_fields(tmp_path: Path, fake_model: str) -> None:
    payload = bench(tmp_path, fake_model)
    assert payload["budget"] == 30
    assert payload["problems"] == 4
    assert set(payload["methods"]) == {"io", "astar"}
    for figures in payload["methods"].values():
        for key in JSON_FIELDS:
            assert isinstance(figures[key], float)
        assert figures["ci_low"] <= figures["success_rate"] <= figures["ci_high"]
        assert figures["n"] == 4
    assert payload["methods"]["io"]["mean_calls"] == 1.0
    assert payload["methods"]["astar"]["success_rate"] > 0
    out = Path(payload["out"])
    for name in ("game24.md", "game24.json", "game24_budget.png", "game24_calls.png"):
        assert (out / name).exists()


def test_a_second_invocation_resumes_and_prints_the_same_figures(
    tmp_path: Path, fake_model: str
) -> None:
    first = bench(tmp_path, fake_model)
    second = bench(tmp_path, fake_model)
    for label in first["methods"]:
        a, b = first["methods"][label], second["methods"][label]
        assert {k: a[k] for k in a if k != "mean_seconds"} == {
            k: b[k] for k in b if k != "mean_seconds"
        }


def test_budgets_give_a_curve(tmp_path: Path, fake_model: str) -> None:
    payload = bench(tmp_path, fake_model, "--budgets", "2,30")
    assert [p["budget"] for p in payload["methods"]["astar"]["curve"]] == [2, 30]


def test_unknown_method_and_executor_are_usage_errors(tmp_path: Path, fake_model: str) -> None:
    for extra in (["--methods", "nope"], ["--executor", "nope"]):
        result = runner.invoke(
            app,
            ["bench", "game24", "--range", "0:2", "--model", fake_model,
             "--out", str(tmp_path / "o"), "--json", *extra],
        )  # fmt: skip
        assert result.exit_code == 2
        assert json.loads(result.stdout)["ok"] is False


def test_bench_run_reads_a_yaml_config(tmp_path: Path, fake_model: str) -> None:
    config = tmp_path / "exp.yaml"
    config.write_text(
        f"name: y\nsuite: game24\nproblems: ['1 1 4 6']\nmethods: [cot]\nmodel: {fake_model}\n"
        f"budgets: [5]\nout: {tmp_path / 'y'}\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["bench", "run", str(config), "--json", "--quiet"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["methods"]["cot"]["n"] == 1


def test_tune_and_distill_read_the_stored_trials(tmp_path: Path, fake_model: str) -> None:
    payload = bench(tmp_path, fake_model)
    out = payload["out"]
    tuned = runner.invoke(app, ["bench", "tune", out, "--method", "astar", "--json"])
    assert tuned.exit_code == 0, tuned.output
    report = json.loads(tuned.stdout)
    assert report["rerun"]["method"] == "astar"
    assert set(report["proposal"]["weights"]) == {
        "no dead numbers",
        "whole numbers",
        "divide 24",
        "at most 24",
    }
    assert (Path(out) / "tuning_astar.md").exists()
    examples = tmp_path / "examples.json"
    distilled = runner.invoke(
        app,
        ["bench", "distill", out, "--method", "astar", "--write", str(examples), "--json"],
    )
    assert distilled.exit_code == 0, distilled.output
    shots = json.loads(examples.read_text())
    assert shots and all(len(s["steps"]) == 3 for s in shots)
    assert json.loads(distilled.stdout)["file"] == str(examples)
    missing = runner.invoke(app, ["bench", "tune", out, "--method", "dfs"])
    assert missing.exit_code == 2
