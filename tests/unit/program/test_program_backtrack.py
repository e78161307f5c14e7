"""When a function's retries run out, the backtrack policy of seed 000: a new round whose
context carries the failed round's summary in the backtrack channel (not the retry
channel), bounded by `backtracks` and by the budget."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_program_strategy import COMBINE, GOAL, SUCC, fenced

from guardsearch import ScriptedModel, Trace
from guardsearch.apps.game24 import solve_game24

WRONG = "def is_goal(state):\n    return True\n"
ALSO_WRONG = "def is_goal(state):\n    return len(state) == 1\n"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path))
    return tmp_path


async def test_a_round_out_of_retries_backtracks_with_its_failure_summary() -> None:
    model = ScriptedModel(
        [fenced(WRONG), fenced(ALSO_WRONG), fenced(GOAL), fenced(COMBINE), fenced(SUCC)]
    )
    trace = Trace()
    result = await solve_game24(
        "4 5 6 10", strategy="program", model=model, samples=1, retries=1, backtracks=1,
        cache=False, trace=trace, feedback=True,
    )  # fmt: skip
    assert result["succeeded"] and result["calls"] == 5
    retry = model.requests[1].messages[0].content
    assert "## Your previous output for this step was rejected" in retry
    assert "Downstream failures" not in retry  # the first round: feedback at the same level
    fresh = model.requests[2].messages[0].content
    assert "## Downstream failures of earlier attempts" in fresh
    assert "Previous Attempt Failed" in fresh and "write_is_goal" in fresh
    assert "is_goal((23,)) returned True" in fresh  # the best failing verdict, carried up
    assert "## Your previous output for this step was rejected" not in fresh  # a new round
    [event] = trace.of_kind("backtrack")
    assert event.step == "write_is_goal" and event.data["rule"] == "rmax exhausted at write_is_goal"
    rounds = [e.data["round"] for e in trace.of_kind("phase") if e.step == "write_is_goal"]
    assert rounds == [1, 2]
    # the rejected round's phase event holds its best failing answer and verdict, so a
    # trace shows the code that failed, not only that something did
    [rejected] = [e for e in trace.of_kind("phase") if e.data["action"] == "program_rejected"]
    code, verdict = rejected.data["best"]
    assert "def is_goal" in code and "is_goal((23,)) returned True" in verdict


async def test_backtracks_bound_the_rounds() -> None:
    model = ScriptedModel([fenced(WRONG), fenced(ALSO_WRONG)], repeat_last=True)
    result = await solve_game24(
        "4 5 6 10", strategy="program", model=model, samples=1, retries=1, backtracks=2,
        cache=False,
    )  # fmt: skip
    assert not result["succeeded"] and result["termination"] == "all_pruned"
    assert result["calls"] == 6  # three rounds of two
    third = model.requests[4].messages[0].content
    assert third.count("Previous Attempt Failed") == 2  # both earlier rounds carried


async def test_the_budget_bounds_the_rounds_too() -> None:
    model = ScriptedModel([fenced(WRONG)], repeat_last=True)
    result = await solve_game24(
        "4 5 6 10", strategy="program", model=model, samples=1, retries=1, backtracks=10,
        cache=False, budget=5,
    )  # fmt: skip
    assert not result["succeeded"] and result["termination"] == "budget_exhausted"
    assert result["calls"] == 5


async def test_without_feedback_the_backtrack_carries_no_test_verdict() -> None:
    model = ScriptedModel(
        [fenced(WRONG), fenced(ALSO_WRONG), fenced(GOAL), fenced(COMBINE), fenced(SUCC)]
    )
    result = await solve_game24(
        "4 5 6 10", strategy="program", model=model, samples=1, retries=1, backtracks=1,
        feedback=False, cache=False,
    )  # fmt: skip
    assert result["succeeded"]
    fresh = model.requests[2].messages[0].content
    assert "Previous Attempt Failed" in fresh and "is_goal((23,))" not in fresh


async def test_a_backtrack_round_does_not_start_greedy_again() -> None:
    # Seen on the 1.5B: at temperature 0 the new round's first sample was the last
    # round's first again (dropped as a repeat, a call for nothing).
    model = ScriptedModel(
        [fenced(WRONG), fenced(ALSO_WRONG), fenced(GOAL), fenced(COMBINE), fenced(SUCC)]
    )
    await solve_game24(
        "4 5 6 10", strategy="program", model=model, samples=1, retries=1, backtracks=1,
        cache=False,
    )  # fmt: skip
    temperatures = [r.temperature for r in model.requests[:3]]
    assert temperatures[0] == 0.0  # the first round starts greedy
    assert temperatures[2] > 0.0  # the backtrack round does not


async def test_a_later_problem_samples_past_the_rounds_an_earlier_one_spent(
    tmp_path: Path,
) -> None:
    # Seen on the 0.5B: a puzzle after one whose combine was never accepted drew the
    # same samples again, token for token (7 calls for nothing). The cache now keeps the
    # rounds spent, and the next problem's round starts past them: new seeds, not greedy.
    first = ScriptedModel([fenced(WRONG)], repeat_last=True)
    options = {"strategy": "program", "samples": 1, "retries": 1, "backtracks": 0,
               "cache_dir": str(tmp_path), "budget": 5}  # fmt: skip
    failed = await solve_game24("4 5 6 10", model=first, **options)
    assert not failed["succeeded"]
    second = ScriptedModel([fenced(GOAL), fenced(COMBINE), fenced(SUCC)])
    solved = await solve_game24("1 1 4 6", model=second, **options)
    assert solved["succeeded"]
    before = {(r.seed, r.temperature) for r in first.requests}
    after = (second.requests[0].seed, second.requests[0].temperature)
    assert after not in before and after[1] > 0.0
