"""Resuming reuses a stored trial only when it ran with the same model and options.

Trials stored before config fingerprints existed (no `fingerprint` field) are reused
while their label's config matches the out directory's manifest; the first run into a
directory without one writes it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import answer

from guardsearch.experiments import ExperimentConfig, ExperimentRunner, JsonlResults
from guardsearch.experiments import trial as trial_module
from guardsearch.experiments.executors import LocalExecutor
from guardsearch.models.scripted import ScriptedModel

ROOT = Path(__file__).parents[3]
PROBLEMS = ["1 1 4 6", "4 5 6 10", "1 2 3 4"]


@pytest.fixture
def two_models() -> Iterator[None]:
    """Scripted models "a" and "b": the same answers under different names."""
    for spec in ("a", "b"):
        trial_module._MODELS[spec] = ScriptedModel(answer, name=f"model-{spec}")
    yield
    for spec in ("a", "b"):
        trial_module._MODELS.pop(spec, None)


def config(tmp_path: Path, model: str = "a", **overrides: Any) -> ExperimentConfig:
    data: dict[str, Any] = {
        "name": "t",
        "suite": "game24",
        "problems": PROBLEMS,
        "methods": ["io", {"method": "cot-sc", "options": {"k": 2}}],
        "model": model,
        "budgets": [10],
        "out": str(tmp_path / "out"),
    }
    data.update(overrides)
    return ExperimentConfig.parse(data)


class CountingExecutor(LocalExecutor):
    def __init__(self) -> None:
        self.ran: list[str] = []

    def run(self, specs: Any, on_result: Any) -> None:
        self.ran += [f"{s.method.label} {s.problem.id}" for s in specs]
        super().run(specs, on_result)


def run(cfg: ExperimentConfig) -> tuple[list[str], dict[str, Any]]:
    executor = CountingExecutor()
    card = ExperimentRunner(cfg, executor=executor).run()
    return executor.ran, card


def strip_fingerprints(store: JsonlResults) -> None:
    """Make the stored trials look like ones written before fingerprints existed."""
    records = [json.loads(line) for line in store.path.read_text("utf-8").splitlines()]
    for record in records:
        record.pop("fingerprint")
        record.pop("config")
    store.path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    traces = list(store.traces.records())
    store.traces.path.unlink()
    for trace in traces:
        store.traces.append(trace["key"], None, trace["events"])
    store.manifest_path.unlink(missing_ok=True)


def test_another_model_does_not_reuse_the_stored_trials(tmp_path: Path, two_models: None) -> None:
    ran, card = run(config(tmp_path, "a"))
    assert len(ran) == 6
    assert card["models"] == ["model-a"]
    runner = ExperimentRunner(config(tmp_path, "b"))
    assert len(runner.pending()) == 6
    assert runner.stale() == [
        {"method": "cot-sc", "trials": 3, "changed": "model 'a' -> 'b'"},
        {"method": "io", "trials": 3, "changed": "model 'a' -> 'b'"},
    ]
    ran, card = run(config(tmp_path, "b"))
    assert len(ran) == 6
    assert card["models"] == ["model-b"]  # not a mix of both
    assert card["methods"]["io"]["n"] == 3
    # Both configs' trials stay stored; going back to "a" reuses its trials.
    assert len(JsonlResults(tmp_path / "out").load()) == 12
    ran, card = run(config(tmp_path, "a"))
    assert ran == []
    assert card["models"] == ["model-a"]


def test_a_changed_option_reruns_only_that_method(tmp_path: Path, two_models: None) -> None:
    run(config(tmp_path))
    changed = config(tmp_path, methods=["io", {"method": "cot-sc", "options": {"k": 3}}])
    assert ExperimentRunner(changed).stale() == [
        {"method": "cot-sc", "trials": 3, "changed": "options.k 2 -> 3"}
    ]
    ran, card = run(changed)
    assert ran == ["cot-sc 1 1 4 6", "cot-sc 4 5 6 10", "cot-sc 1 2 3 4"]
    assert card["methods"]["cot-sc"]["mean_calls"] == 3  # k = 3 samples, not the old 2
    assert card["methods"]["io"]["n"] == 3


def test_the_same_config_still_resumes(tmp_path: Path, two_models: None) -> None:
    run(config(tmp_path))
    runner = ExperimentRunner(config(tmp_path))
    assert runner.pending() == []
    assert runner.stale() == []
    # The key order of options does not matter.
    cfg = config(tmp_path, methods=["io", {"method": "cot-sc", "options": {"k": 2}}])
    assert ExperimentRunner(cfg).pending() == []


def test_trials_without_a_fingerprint_are_adopted_by_the_first_run(
    tmp_path: Path, two_models: None
) -> None:
    _, card = run(config(tmp_path))
    store = JsonlResults(tmp_path / "out")
    strip_fingerprints(store)
    assert all(r.fingerprint is None for r in store.load())
    # The first run with fingerprints reuses every trial and records the directory's config.
    ran, again = run(config(tmp_path))
    assert ran == []
    assert again["methods"] == card["methods"]
    manifest = store.manifest()
    assert manifest["io"]["config"] == {"suite": "game24", "model": "a", "method": "io",
                                        "options": {}}  # fmt: skip
    assert manifest["cot-sc"]["config"]["options"] == {"k": 2}
    # Their traces are still found.
    legacy = next(r for r in ExperimentRunner(config(tmp_path)).results() if r.method == "io")
    assert store.events(legacy) and store.events(legacy.key) == store.events(legacy)


def test_trials_without_a_fingerprint_are_not_reused_once_the_config_changed(
    tmp_path: Path, two_models: None
) -> None:
    run(config(tmp_path))
    strip_fingerprints(JsonlResults(tmp_path / "out"))
    run(config(tmp_path))  # writes the manifest: these trials ran with model "a", k = 2
    changed = config(tmp_path, methods=["io", {"method": "cot-sc", "options": {"k": 3}}])
    assert ExperimentRunner(changed).stale() == [
        {"method": "cot-sc", "trials": 3, "changed": "options.k 2 -> 3"}
    ]
    ran, _ = run(changed)
    assert len(ran) == 3
    runner = ExperimentRunner(config(tmp_path, "b"))
    assert len(runner.pending()) == 6
    # Named against the trial stored last under each key (cot-sc: the k = 3 run).
    assert {s["method"]: s["changed"] for s in runner.stale()} == {
        "io": "model 'a' -> 'b'",
        "cot-sc": "model 'a' -> 'b', options.k 3 -> 2",
    }
    _, card = run(config(tmp_path, "b"))
    assert card["models"] == ["model-b"]


def test_pending_and_results_do_not_write_the_manifest(tmp_path: Path, two_models: None) -> None:
    run(config(tmp_path))
    store = JsonlResults(tmp_path / "out")
    strip_fingerprints(store)
    runner = ExperimentRunner(config(tmp_path, "b"))
    # Read-only calls judge as the first run would (adopting "b"), but write nothing.
    assert runner.pending() == []
    assert len(runner.results()) == 6
    assert not store.manifest_path.exists()


def test_the_committed_game24_run_resumes_without_rerunning_its_trials(tmp_path: Path) -> None:
    source = ROOT / "benchmarks" / "results" / "game24_run" / "trials.jsonl"
    if not source.exists():
        pytest.skip("no committed game24 run")
    out = tmp_path / "game24_run"
    out.mkdir()
    shutil.copy(source, out / "trials.jsonl")  # read only: the committed files stay as they are
    committed = ExperimentConfig.from_yaml(ROOT / "benchmarks" / "game24.yaml")
    cfg = committed.model_copy(update={"out": str(out), "report_dir": str(tmp_path)})
    runner = ExperimentRunner(cfg)
    planned = {s.key for s in runner.plan()}
    stored = [r for r in JsonlResults(out).load() if r.key in planned]
    assert len(stored) >= 200
    pending = {s.key for s in runner.pending()}
    assert not pending & {r.key for r in stored}
    assert len(runner.results()) == len({r.key for r in stored})
    assert runner.stale() == []
