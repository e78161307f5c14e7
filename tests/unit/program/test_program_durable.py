"""The program strategy as a durable run: accepted code is saved in the run store at a
checkpoint of its own, so a run killed after the code was accepted resumes without
asking the model again (no file cache, no memo needed) and without writing anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_program_strategy import CHEATS_ON_ROOT, COMBINE, GOAL, SUCC, fenced

from guardsearch import ScriptedModel, Trace
from guardsearch.apps.game24 import check_answer, parse_numbers
from guardsearch.runs import RunSpec, create_run, execute_run
from guardsearch.runs.checkpoint import load_state
from guardsearch.search.strategies import program as strategy
from guardsearch.store import open_store

SPEC = RunSpec(
    app="game24",
    problem={"numbers": "4 5 6 10"},
    strategy="program",
    options={"cache": False, "search": "dfs"},
    model="scripted",
    budget={"calls": 10},
)


class Killed(BaseException):
    """The process dying: nothing catches it, nothing after it is written."""


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path))
    return tmp_path


async def test_a_run_killed_after_the_code_was_accepted_resumes_without_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store(str(tmp_path / "runs.db"))
    run = create_run(SPEC, store).id

    async def killed(*args: Any, **kwargs: Any) -> Any:
        raise Killed

    monkeypatch.setattr(strategy, "run_program", killed)  # dies as the search starts
    writer = ScriptedModel([fenced(GOAL), fenced(COMBINE), fenced(SUCC)])
    with pytest.raises(Killed):
        await execute_run(run, store, model=writer)
    assert writer.calls == 3
    saved = load_state(store.load_checkpoint(run))
    assert saved is not None
    assert set(saved.data["sources"]) == {"is_goal", "combine", "successors"}
    assert "def successors" in saved.data["sources"]["successors"]  # the code is in the store

    monkeypatch.undo()
    nobody = ScriptedModel([])  # any request would fail the run
    trace = Trace()
    done = await execute_run(run, store, model=nobody, trace=trace)
    assert done.status == "succeeded" and nobody.calls == 0
    assert not trace.of_kind("model_call") and not trace.of_kind("guard_verdict")
    assert check_answer(parse_numbers("4 5 6 10"), done.result["answer"]) is None
    assert done.result["calls"] == 3  # the first session's calls, not paid again


async def test_a_run_killed_after_a_search_time_fault_rewrites_only_that_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store(str(tmp_path / "runs.db"))
    run = create_run(SPEC, store).id
    writes: list[str] = []
    real = strategy.write_function

    async def counted(domain: Any, spec: Any, *args: Any, **kwargs: Any) -> Any:
        writes.append(spec.name)
        if len(writes) == 4:
            raise Killed  # dies as the faulty function is written again
        return await real(domain, spec, *args, **kwargs)

    monkeypatch.setattr(strategy, "write_function", counted)
    with pytest.raises(Killed):
        await execute_run(
            run, store, model=ScriptedModel([fenced(GOAL), fenced(COMBINE), fenced(CHEATS_ON_ROOT)])
        )
    saved = load_state(store.load_checkpoint(run))
    assert saved is not None and list(saved.data["sources"]) == ["is_goal", "combine"]
    assert [f["fn"] for f in saved.data["faults"]] == ["successors"]

    monkeypatch.setattr(strategy, "write_function", real)
    rewriter = ScriptedModel([fenced(SUCC)])
    done = await execute_run(run, store, model=rewriter)
    assert done.status == "succeeded" and rewriter.calls == 1
    asked = "\n".join(m.content for m in rewriter.requests[0].messages)
    assert "At search time" in asked  # the saved fault still goes back to the writer
