"""`guardsearch solve game24`: the JSON contract, errors and exit codes, on scripted models."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from guardsearch.apps.game24 import check_answer, parse_numbers
from guardsearch.cli import app

runner = CliRunner()


def _answers(tmp_path: Path, *steps: list[str]) -> str:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps([json.dumps({"steps": s}) for s in steps]))
    return f"scripted:{path}"


def test_solve_game24_json_has_the_contract_fields(tmp_path: Path) -> None:
    spec = _answers(tmp_path, ["5 * 6"], ["30 - 10"], ["4 + 20"])
    result = runner.invoke(app, ["solve", "game24", "4 5 6 10", "--model", spec, "--json"])
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["succeeded"] is True
    assert payload["termination"] == "success"
    assert check_answer(parse_numbers("4 5 6 10"), payload["answer"]) is None
    assert payload["calls"] == 3
    assert payload["tokens"] > 0
    assert payload["path"] == [
        "5 * 6 = 30 (left: 4 10 30)",
        "30 - 10 = 20 (left: 4 20)",
        "4 + 20 = 24 (left: 24)",
    ]


def test_solve_game24_plain_prints_the_expression(tmp_path: Path) -> None:
    spec = _answers(tmp_path, ["5 * 6"], ["30 - 10"], ["4 + 20"])
    result = runner.invoke(app, ["solve", "game24", "4 5 6 10", "--model", spec])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip().endswith("= 24")
    assert "calls" in result.stderr


def test_an_exhausted_budget_exits_1_with_the_reason(tmp_path: Path) -> None:
    spec = _answers(tmp_path, ["4 + 5"])  # repeated: never reaches 24
    result = runner.invoke(
        app,
        ["solve", "game24", "4 5 6 10", "--model", spec, "--budget-calls", "3", "--json"],
    )
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["succeeded"] is False
    assert payload["answer"] is None
    assert payload["termination"] in {"budget_exhausted", "all_pruned"}
    assert payload["calls"] <= 3


def test_an_unknown_strategy_is_a_usage_error(tmp_path: Path) -> None:
    spec = _answers(tmp_path, ["5 * 6"])
    result = runner.invoke(
        app, ["solve", "game24", "4 5 6 10", "--model", spec, "--strategy", "nope", "--json"]
    )
    assert result.exit_code == 2
    assert "unknown strategy" in json.loads(result.stdout)["error"]


def test_bad_numbers_are_a_usage_error(tmp_path: Path) -> None:
    spec = _answers(tmp_path, ["5 * 6"])
    result = runner.invoke(app, ["solve", "game24", "4 five", "--model", spec, "--json"])
    assert result.exit_code == 2
    assert "numbers" in json.loads(result.stdout)["error"]


def test_every_strategy_runs_from_the_cli(tmp_path: Path) -> None:
    for strategy in ["dfs", "bfs", "beam", "astar", "best_first", "consensus", "refine"]:
        spec = _answers(tmp_path, ["5 * 6"], ["30 - 10"], ["4 + 20"])
        result = runner.invoke(
            app,
            ["solve", "game24", "4 5 6 10", "--model", spec, "--strategy", strategy, "--json"],
        )
        payload = json.loads(result.stdout)
        assert payload["strategy"] == strategy
        assert payload["termination"] in {
            "success",
            "budget_exhausted",
            "all_pruned",
            "backtrack_ceiling",
        }, payload
