"""ExperimentRunner: planning, resuming, per-method problems, results on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import CountingExecutor

from guardsearch.core.errors import ConfigError
from guardsearch.experiments import ExperimentConfig, ExperimentRunner, JsonlResults
from guardsearch.experiments import trial as trial_module
from guardsearch.experiments.executors import LocalExecutor


def config(tmp_path: Path, model: str, **overrides: Any) -> ExperimentConfig:
    data: dict[str, Any] = {
        "name": "t",
        "suite": "game24",
        "problems": ["1 1 4 6", "4 5 6 10", "1 2 3 4"],
        "methods": ["io", "astar"],
        "model": model,
        "budgets": [5, 20],
        "out": str(tmp_path / "out"),
    }
    data.update(overrides)
    return ExperimentConfig.parse(data)


def test_deterministic_methods_run_once_at_the_largest_budget(
    tmp_path: Path, fake_model: str
) -> None:
    runner = ExperimentRunner(config(tmp_path, fake_model))
    plan = runner.plan()
    assert len(plan) == 6  # 3 problems x 2 methods, budget 20 only
    assert {s.budget for s in plan} == {20}


def test_without_derivation_every_budget_runs(tmp_path: Path, fake_model: str) -> None:
    runner = ExperimentRunner(config(tmp_path, fake_model, derive_budgets=False))
    assert sorted({s.budget for s in runner.plan()}) == [5, 20]
    assert len(runner.plan()) == 12


def test_a_second_run_skips_the_finished_trials(tmp_path: Path, fake_model: str) -> None:
    first = CountingExecutor()
    card = ExperimentRunner(config(tmp_path, fake_model), executor=first).run()
    assert len(first.ran) == 6
    second = CountingExecutor()
    again = ExperimentRunner(config(tmp_path, fake_model), executor=second).run()
    assert second.ran == []
    assert again["methods"] == card["methods"]


def test_an_interrupted_run_resumes_with_only_the_missing_trials(
    tmp_path: Path, fake_model: str
) -> None:
    cfg = config(tmp_path, fake_model)
    runner = ExperimentRunner(cfg)
    store = JsonlResults(cfg.out_dir)
    plan = runner.plan()
    # Run the first two trials, then leave a torn line as a killed writer would.
    LocalExecutor().run(plan[:2], store.save)
    with store.path.open("a", encoding="utf-8") as fh:
        fh.write('{"key": "torn')
    executor = CountingExecutor()
    ExperimentRunner(cfg, executor=executor).run()
    assert executor.ran == [s.key for s in plan[2:]]
    lines = store.path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6
    assert all(json.loads(line)["key"] for line in lines)


def test_results_and_traces_are_written_per_trial(tmp_path: Path, fake_model: str) -> None:
    cfg = config(tmp_path, fake_model)
    ExperimentRunner(cfg).run()
    store = JsonlResults(cfg.out_dir)
    results = {r.key: r for r in store.load()}
    solved = results["1 1 4 6|astar|t0|b20"]
    assert solved.succeeded
    assert solved.calls >= 1
    assert solved.detail["path"]
    assert solved.detail["nodes"]
    events = store.events(solved.key)
    assert sum(e["kind"] == "model_call" for e in events) == solved.calls


def test_a_method_may_run_on_its_own_problems(tmp_path: Path, fake_model: str) -> None:
    cfg = config(
        tmp_path,
        fake_model,
        problems={"range": "900:910"},
        methods=["io", {"method": "astar", "problems": {"range": "900:910", "every": 5}}],
    )
    runner = ExperimentRunner(cfg)
    plan = runner.plan()
    assert sum(s.method.label == "io" for s in plan) == 10
    assert [s.problem.id for s in plan if s.method.label == "astar"] == ["0900", "0905"]


def test_budget_exhaustion_is_a_result_not_an_error(tmp_path: Path, fake_model: str) -> None:
    cfg = config(tmp_path, fake_model, methods=["astar"], budgets=[1], problems=["4 5 6 10"])
    card = ExperimentRunner(cfg).run()
    astar = card["methods"]["astar"]
    assert astar["terminations"] == {"budget_exhausted": 1}
    assert astar["mean_calls"] == 1


def test_unknown_methods_and_suites_are_config_errors(tmp_path: Path, fake_model: str) -> None:
    with pytest.raises(ConfigError, match="unknown method"):
        ExperimentRunner(config(tmp_path, fake_model, methods=["nope"]))
    with pytest.raises(ConfigError, match="suite"):
        ExperimentRunner(config(tmp_path, fake_model, suite="nope"))
    with pytest.raises(ConfigError, match="unique"):
        ExperimentRunner(config(tmp_path, fake_model, methods=["io", "io"]))


def test_a_yaml_config_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "exp.yaml"
    path.write_text(
        "name: y\nsuite: game24\nproblems: {range: '900:902'}\n"
        "methods: [io, {label: sc3, method: cot-sc, options: {k: 3}}]\n"
        "budgets: [40, 10]\nout: somewhere\n",
        encoding="utf-8",
    )
    cfg = ExperimentConfig.from_yaml(path)
    assert cfg.budgets == [10, 40]
    assert [(m.label, m.method, m.options) for m in cfg.method_specs()] == [
        ("io", "io", {}),
        ("sc3", "cot-sc", {"k": 3}),
    ]
    bad = tmp_path / "bad.yaml"
    bad.write_text("suite: game24\nmethods: []\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        ExperimentConfig.from_yaml(bad)


def test_models_are_loaded_once_per_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []

    def fake_spec(spec: str) -> Any:
        built.append(spec)
        return object()

    monkeypatch.setattr(trial_module, "model_from_spec", fake_spec)
    monkeypatch.setattr(trial_module, "_MODELS", {})
    assert trial_module.model_for("x") is trial_module.model_for("x")
    assert built == ["x"]


def test_every_trial_reports_how_feedback_steered_it(tmp_path: Path, fake_model: str) -> None:
    # issue 16: the trace's repeats, repairs and prevented failures land in the results.
    card = ExperimentRunner(config(tmp_path, fake_model, methods=["astar"])).run()
    rows = JsonlResults(tmp_path / "out").load()
    assert rows and all(set(r.steering) >= {"outputs", "repeats", "repairs"} for r in rows)
    assert (
        sum(r.steering["outputs"] for r in rows)
        == card["methods"]["astar"]["steering"]["outputs"]
        > 0
    )
