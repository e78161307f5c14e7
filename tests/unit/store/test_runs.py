"""Durable runs: pause for a person, budgets, frozen-solver locks, ownership, specs."""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path

import pytest
from durable_apps import answer_for, asking_answer, asking_proposer

from guardsearch import ConfigError, ScriptedModel
from guardsearch.runs import (
    LockMismatch,
    RunSpec,
    check_lock,
    create_run,
    execute_run,
    fingerprint,
    write_lock,
)
from guardsearch.store.base import RunStore
from guardsearch.store.sql import owner_id

ASKING = RunSpec(app="durable_apps:asking_app", strategy="dfs", model="scripted")


async def test_a_guard_that_asks_pauses_the_run_and_input_resumes_it(store: RunStore) -> None:
    run = create_run(ASKING, store).id
    paused = await execute_run(run, store, model=ScriptedModel(asking_answer))
    assert (paused.status, paused.question) == ("paused", "Deploy to production now?")
    assert paused.paused_node == "n1"  # the analysis node whose child asked
    model = ScriptedModel(asking_answer)
    done = await execute_run(run, store, human_input="yes, at 10:00", model=model)
    assert done.status == "succeeded"
    assert done.result is not None
    assert done.result["path"][-1] == "report done"
    # Node isolation: the answer is in the winning path's context, and the prompts
    # after the pause showed it to the model.
    assert done.result["context"]["inputs"] == [["Deploy to production now?", "yes, at 10:00"]]
    assert all("yes, at 10:00" in r.messages[0].content for r in model.requests)
    kinds = [e["data"].get("message") for e in store.events(run) if e["kind"] == "note"]
    assert "input from a person" in kinds


@pytest.mark.parametrize("strategy", ["dfs", "bfs", "astar"])
async def test_a_step_that_asks_pauses_at_the_node_it_expands_and_input_resumes_it(
    store: RunStore, strategy: str
) -> None:
    spec = RunSpec(app="durable_apps:plain_steps_app", strategy=strategy, model="scripted")
    run = create_run(spec, store).id
    paused = await execute_run(run, store, model=ScriptedModel(asking_proposer))
    assert (paused.status, paused.question) == ("paused", "Which region should release 2.1 go to?")
    assert paused.paused_node == "n1"  # the analysis node, whose deploy step asked
    model = ScriptedModel(asking_proposer)
    done = await execute_run(run, store, human_input="eu-west", model=model)
    assert done.status == "succeeded", done.error
    assert done.result is not None
    assert done.result["path"] == ["analysis done", "deploy to eu-west", "report done"]
    assert done.result["context"]["inputs"] == [
        ["Which region should release 2.1 go to?", "eu-west"]
    ]


async def test_input_without_a_saved_node_is_refused_before_the_status_changes(
    store: RunStore,
) -> None:
    run = create_run(ASKING, store).id
    store.transition(run, "running", new_session=True)
    store.transition(run, "paused", question="Deploy now?")  # no node, no checkpoint
    before = store.get_run(run)
    with pytest.raises(ConfigError, match="has no saved node waiting for input"):
        await execute_run(run, store, human_input="yes", model=ScriptedModel(asking_answer))
    after = store.get_run(run)
    assert (after.status, after.sessions, after.owner) == ("paused", before.sessions, None)
    assert after.question == "Deploy now?"


async def test_a_person_saying_no_ends_the_branch(store: RunStore) -> None:
    run = create_run(ASKING, store).id
    await execute_run(run, store, model=ScriptedModel(asking_answer))
    done = await execute_run(run, store, human_input="no", model=ScriptedModel(asking_answer))
    assert done.status == "failed" and done.termination in ("all_pruned", "backtrack_ceiling")


async def test_a_paused_run_needs_input_and_only_a_paused_run_takes_it(store: RunStore) -> None:
    run = create_run(ASKING, store).id
    await execute_run(run, store, model=ScriptedModel(asking_answer))
    with pytest.raises(ConfigError, match="paused waiting for input: Deploy"):
        await execute_run(run, store, model=ScriptedModel(asking_answer))
    other = create_run(RunSpec(app="durable_apps:search_app", strategy="bfs"), store).id
    with pytest.raises(ConfigError, match="is created, not paused"):
        await execute_run(other, store, human_input="yes", model=ScriptedModel(answer_for("bfs")))


async def test_a_succeeded_run_is_not_resumed(store: RunStore) -> None:
    spec = RunSpec(app="durable_apps:search_app", strategy="bfs")
    run = create_run(spec, store).id
    assert (await execute_run(run, store, model=ScriptedModel(answer_for("bfs")))).status == (
        "succeeded"
    )
    with pytest.raises(ConfigError, match="already succeeded"):
        await execute_run(run, store, model=ScriptedModel(answer_for("bfs")))


async def test_a_run_out_of_budget_resumes_with_a_larger_one(store: RunStore) -> None:
    spec = RunSpec(app="durable_apps:search_app", strategy="dfs", budget={"calls": 3})
    run = create_run(spec, store).id
    model = ScriptedModel(answer_for("dfs"))
    first = await execute_run(run, store, model=model)
    assert (first.status, first.termination, first.calls) == ("failed", "budget_exhausted", 3)
    again = await execute_run(run, store, model=model)  # same budget: still exhausted
    assert (again.status, again.calls) == ("failed", 3)
    done = await execute_run(run, store, budget={"calls": 30}, model=model)
    whole = await execute_run(
        create_run(RunSpec(app="durable_apps:search_app", strategy="dfs"), store).id,
        store,
        model=ScriptedModel(answer_for("dfs")),
    )
    assert done.status == "succeeded" and done.result == whole.result
    assert model.calls == whole.calls  # nothing paid twice across the three sessions


async def test_a_run_owned_by_a_live_process_is_not_taken_over(store: RunStore) -> None:
    run = create_run(RunSpec(app="durable_apps:search_app", strategy="bfs"), store).id
    parent = f"{owner_id().rpartition(':')[0]}:{os.getppid()}"
    store.transition(run, "running", owner=parent)
    with pytest.raises(ConfigError, match="is running in process"):
        await execute_run(run, store, model=ScriptedModel(answer_for("bfs")))
    store.transition(run, "running", owner=f"{owner_id().rpartition(':')[0]}:999999999")
    done = await execute_run(run, store, model=ScriptedModel(answer_for("bfs")))
    assert done.status == "succeeded"  # a dead owner's run is taken over


def test_a_run_spec_must_be_plain_json_with_known_budget_keys() -> None:
    with pytest.raises(ConfigError, match="plain JSON"):
        RunSpec(app="game24", options={"should_stop": lambda: False})
    with pytest.raises(ConfigError, match="unknown budget key"):
        RunSpec(app="game24", budget={"dollars": 3})
    with pytest.raises(ConfigError, match="unknown run spec field"):
        RunSpec.from_dict({"app": "game24", "colour": "red"})


def test_a_run_with_a_bad_problem_is_refused_before_it_is_created(store: RunStore) -> None:
    with pytest.raises(ConfigError, match="unknown app 'nope'"):
        create_run(RunSpec(app="nope"), store)
    with pytest.raises(ConfigError, match="Game of 24 needs numbers"):
        create_run(RunSpec(app="game24", problem={"numbers": "4 x"}), store)
    assert store.list_runs() == []


def test_the_lock_records_prompts_config_model_and_version(tmp_path: Path) -> None:
    script = tmp_path / "answers.json"
    script.write_text('["1 + 2"]')
    spec = RunSpec(app="game24", problem={"numbers": "1 2 3 4"}, model=f"scripted:{script}")
    fp = fingerprint(spec)
    assert "game24_propose.j2" in fp["prompts"]
    assert fp["model"]["weights_sha256"] is not None
    assert fp["config"]["value"]["strategy"] == "dfs"
    lock = write_lock(fp, tmp_path / "guardsearch.lock", run_id="run-x")
    check_lock(spec, lock)  # unchanged: accepted
    other = RunSpec(app="game24", problem={"numbers": "5 5 5 1"}, model=f"scripted:{script}")
    check_lock(other, lock)  # another problem, same solver: accepted


def test_a_locked_run_names_everything_that_changed(tmp_path: Path) -> None:
    script = tmp_path / "answers.json"
    script.write_text('["1 + 2"]')
    spec = RunSpec(app="game24", problem={"numbers": "1 2 3 4"}, model=f"scripted:{script}")
    lock = write_lock(fingerprint(spec), tmp_path / "guardsearch.lock", run_id="run-x")
    data = json.loads(lock.read_text())
    data["prompts"]["game24_propose.j2"] = "0" * 64
    data["package_version"] = "0.0.1"
    lock.write_text(json.dumps(data))
    script.write_text('["2 + 2"]')
    changed = RunSpec(
        app="game24", strategy="beam", problem={"numbers": "1 2 3 4"}, model=f"scripted:{script}"
    )
    with pytest.raises(LockMismatch) as caught:
        check_lock(changed, lock)
    text = str(caught.value)
    assert 'config changed: strategy "dfs" -> "beam"' in text
    assert "prompt template game24_propose.j2 changed" in text
    assert "package version 0.0.1 ->" in text
    assert "model weights of 'scripted:" in text
    assert len(caught.value.differences) == 4
    with pytest.raises(ConfigError, match="no lock file"):
        check_lock(spec, tmp_path / "missing.lock")


async def test_a_locked_resume_is_refused_when_the_solver_changed(
    store: RunStore, tmp_path: Path
) -> None:
    spec = RunSpec(app="durable_apps:search_app", strategy="bfs", model="scripted")
    lock = write_lock(fingerprint(spec), tmp_path / "guardsearch.lock", run_id="run-x")
    run = create_run(RunSpec(app="durable_apps:search_app", strategy="beam"), store).id
    with pytest.raises(LockMismatch, match="strategy"):
        await execute_run(run, store, locked=lock, model=ScriptedModel(answer_for("beam")))
    with pytest.raises(LockMismatch):
        create_run(RunSpec(app="durable_apps:search_app", strategy="beam"), store, locked=lock)


CUSTOM_SOLVER = """
from guardsearch import Step
from guardsearch.registry import AppSetup
from guardsearch.search import StepSpace

PROMPT = "STEP:analysis Analyse the release."


def build(problem, strategy):
    steps = [Step(name="analysis", prompt=PROMPT), Step(name="report", prompt="STEP:report")]
    return AppSetup(space=StepSpace(objective="Ship release 2.1", steps=steps))
"""


def test_a_locked_custom_solver_is_refused_when_its_code_or_step_prompts_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "custom_solver_lock.py"
    source.write_text(CUSTOM_SOLVER)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "custom_solver_lock", raising=False)
    spec = RunSpec(app="custom_solver_lock:build", strategy="dfs", model="scripted")
    fp = fingerprint(spec)
    assert fp["app"]["module"] == "custom_solver_lock"
    assert set(fp["app"]["step_prompts"]) == {"analysis", "report"}
    lock = write_lock(fp, tmp_path / "guardsearch.lock", run_id="run-x")
    check_lock(spec, lock)  # unchanged: accepted

    # The module's code changes (here only a comment: still not the locked solver).
    source.write_text(CUSTOM_SOLVER + "\n# tuned the rubric\n")
    with pytest.raises(LockMismatch) as caught:
        check_lock(spec, lock)
    assert caught.value.differences == [
        f"app module custom_solver_lock changed (sha256 {fp['app']['source_sha256'][:12]}… -> "
        f"{fingerprint(spec)['app']['source_sha256'][:12]}…)"
    ]
    # A step prompt changes (as the module, reloaded, would build it).
    source.write_text(CUSTOM_SOLVER.replace("Analyse the release.", "Analyse it."))
    importlib.reload(sys.modules["custom_solver_lock"])
    with pytest.raises(LockMismatch) as caught:
        check_lock(spec, lock)
    text = str(caught.value)
    assert "app module custom_solver_lock changed" in text
    assert "step prompt analysis changed (sha256" in text
    assert "report" not in text
