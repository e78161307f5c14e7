"""`guardsearch solve game24`: the JSON contract, errors and exit codes, on scripted models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardsearch import ModelRequest, ScriptedModel
from guardsearch.apps import solve as solve_module
from guardsearch.apps.game24 import check_answer, default_options, parse_numbers
from guardsearch.apps.game24.solve import CONSENSUS_TEMPERATURE
from guardsearch.cli import app
from guardsearch.registry import build_app
from guardsearch.search.strategies.consensus import ConsensusOptions

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


def _recording_model(monkeypatch: pytest.MonkeyPatch) -> ScriptedModel:
    """A scripted proposer the CLI will use whatever `--model` says; it keeps every request."""
    model = ScriptedModel([json.dumps({"steps": ["5 * 6"]})], repeat_last=True)
    monkeypatch.setattr(solve_module, "model_from_spec", lambda spec: model)
    return model


def test_consensus_samples_with_distinct_seeds_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = _recording_model(monkeypatch)
    result = runner.invoke(
        app, ["solve", "game24", "4 5 6 10", "--strategy", "consensus", "--json", "--quiet"]
    )
    assert result.exit_code in (0, 1), result.output
    roots = [r for r in model.requests if "Input: 4 5 6 10\n" in r.messages[-1].content]
    assert len(roots) == ConsensusOptions().n  # one greedy rollout per candidate
    assert all(r.temperature > 0 for r in model.requests)
    assert all(r.temperature == CONSENSUS_TEMPERATURE for r in model.requests)
    seeds = [r.seed for r in roots]
    assert None not in seeds and len(set(seeds)) == len(seeds)


def test_temperature_and_samples_options_reach_every_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = _recording_model(monkeypatch)
    result = runner.invoke(
        app,
        ["solve", "game24", "4 5 6 10", "--strategy", "consensus", "--temperature", "0",
         "--samples", "2", "--budget-calls", "4", "--json", "--quiet"],
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    assert model.requests and all(r.temperature == 0.0 for r in model.requests)  # asked for 0
    first_round = [r.seed for r in model.requests[:2]]
    assert first_round == [0, 1]  # two samples per expansion, each its own seed
    bad = runner.invoke(app, ["solve", "game24", "4 5 6 10", "--temperature", "-1"])
    assert bad.exit_code == 2


def test_other_strategies_stay_greedy_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    model = _recording_model(monkeypatch)
    runner.invoke(app, ["solve", "game24", "4 5 6 10", "--strategy", "astar", "--json"])
    # A node's first expansion is greedy; its re-expansions follow the schedule (issue 16:
    # 0.7, then 1.0, fresh seeds), not consensus's temperature.
    first = [r for r in model.requests if r.seed == 0]
    assert first and all(r.temperature == 0.0 for r in first)
    assert {r.temperature for r in model.requests} <= {0.0, 0.7, 1.0}
    assert default_options("consensus") == {"temperature": CONSENSUS_TEMPERATURE}
    assert build_app("game24", {"numbers": "4 5 6 10"}, "consensus").options == {
        "temperature": CONSENSUS_TEMPERATURE
    }


WINNING = {"4 5 6 10": ["5 * 6", "4 + 5"], "4 10 30": ["30 - 10"], "4 20": ["20 - 4", "4 + 20"]}


def by_numbers(request: ModelRequest) -> str:
    """The proposer's answer for the numbers left (whatever the seed or the order)."""
    left = request.messages[-1].content.split("Input: ", 1)[1].splitlines()[0]
    return json.dumps({"steps": WINNING.get(left, ["4 + 5"])})


def test_concurrency_reaches_the_engine_and_keeps_the_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from guardsearch.search import run as search_run

    seen: list[object] = []
    real = search_run.EngineOptions

    def spy(**kw: object) -> object:
        seen.append(kw.get("concurrency"))
        return real(**kw)  # type: ignore[arg-type]

    monkeypatch.setattr(search_run, "EngineOptions", spy)
    outputs = []
    for extra in ([], ["--concurrency", "4"]):
        model = ScriptedModel(by_numbers)
        monkeypatch.setattr(solve_module, "model_from_spec", lambda spec, m=model: m)
        result = runner.invoke(
            app,
            ["solve", "game24", "4 5 6 10", "--samples", "2", "--json", "--quiet", *extra],
        )
        assert result.exit_code == 0, result.output
        payload = json.loads(result.stdout)
        outputs.append({k: v for k, v in payload.items() if k != "seconds"})
    assert seen == [None, 4]
    assert outputs[0] == outputs[1]
    bad = runner.invoke(app, ["solve", "game24", "4 5 6 10", "--concurrency", "0"])
    assert bad.exit_code == 2
