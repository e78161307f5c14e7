"""The Ray executor gives the same scorecard as the local one (a replayed model).

Starts a local Ray (2 CPUs, no dashboard) and shuts it down; about half a minute.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from helpers import recorder

from guardsearch.experiments import (
    ExperimentConfig,
    ExperimentRunner,
    LocalExecutor,
    RayExecutor,
)
from guardsearch.experiments import trial as trial_module

ray = pytest.importorskip("ray")


def _config(out: Path, model: str) -> ExperimentConfig:
    return ExperimentConfig.parse(
        {
            "name": "same",
            "suite": "game24",
            "problems": ["1 1 4 6", "4 5 6 10", "2 3 5 12", "1 2 3 4"],
            "methods": ["io", "cot", "astar", "dfs", "tot-bfs"],
            "model": model,
            "budgets": [5, 15, 30],
            "out": str(out),
        }
    )


def _without_time(value: Any) -> Any:
    """Wall time (and which executor ran) is all that may differ."""
    if isinstance(value, dict):
        return {
            k: _without_time(v) for k, v in value.items() if "seconds" not in k and k != "executor"
        }
    if isinstance(value, list):
        return [_without_time(v) for v in value]
    return value


def test_ray_and_local_executors_give_the_same_scorecard(tmp_path: Path) -> None:
    log = tmp_path / "replay.jsonl"
    trial_module._MODELS["recording"] = recorder(log)
    try:
        ExperimentRunner(_config(tmp_path / "record", "recording")).run()
    finally:
        trial_module._MODELS.pop("recording", None)
    spec = f"replay:{log}"
    local = ExperimentRunner(_config(tmp_path / "local", spec), executor=LocalExecutor()).run()
    with warnings.catch_warnings():
        # Ray's own start-up may warn (deprecations inside ray); not ours to fix.
        warnings.filterwarnings("ignore", module=r"ray(\..*)?$")
        warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*ray.*")
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            remote = ExperimentRunner(_config(tmp_path / "ray", spec), executor=RayExecutor()).run()
        finally:
            ray.shutdown()
    assert remote["executor"] == "ray"
    assert local["methods"]["astar"]["successes"] >= 1
    assert _without_time(remote) == _without_time(local)
    local_results = {
        r.key: r for r in ExperimentRunner(_config(tmp_path / "local", spec)).results()
    }
    remote_results = {r.key: r for r in ExperimentRunner(_config(tmp_path / "ray", spec)).results()}
    assert local_results.keys() == remote_results.keys()
    for key, r in local_results.items():
        other = remote_results[key]
        assert (r.succeeded, r.calls, r.prompt_tokens, r.answer, r.detail.get("path")) == (
            other.succeeded,
            other.calls,
            other.prompt_tokens,
            other.answer,
            other.detail.get("path"),
        )
