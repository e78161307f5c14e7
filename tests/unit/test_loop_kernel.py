"""The loop kernel: fixed phase fields, one error -> stop-reason mapping, finish."""

from __future__ import annotations

import pytest

from guardsearch import (
    Budget,
    BudgetExceeded,
    ConfigError,
    ModelError,
    MoveSpace,
    StepFailed,
    Usage,
    run_search_sync,
)
from guardsearch.core.errors import ReplayMiss, RunError, StoreError
from guardsearch.core.events import Trace
from guardsearch.core.outcome import CORE_STOP_REASONS, new_run_id, stop_reason_for
from guardsearch.kernel import FIXED_FIELDS, Kernel, Stop, phase_record
from guardsearch.models.scripted import ScriptedModel


class Clock:
    def __init__(self) -> None:
        self.now = 10.0

    def __call__(self) -> float:
        return self.now


def kernel(**kw: object) -> Kernel:
    return Kernel("demo", ScriptedModel(["ok"]), Budget.of(3), **kw)  # type: ignore[arg-type]


def _failed() -> StepFailed:
    return StepFailed("s", attempts=2, last_artifact=None, feedback=["no"], usage=Usage())


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (BudgetExceeded("call limit 3 reached", Usage()), "budget_exhausted"),
        (BudgetExceeded("deadline of 5s passed", Usage()), "deadline"),
        (_failed(), "step_failed"),
        (ModelError("down"), "model_error"),
        (ReplayMiss("abc", "log.jsonl"), "model_error"),
        (StoreError("runs.db", "database is locked"), "store_error"),
        (RunError("odd"), "run_error"),
        (ConfigError("bad"), "invalid_request"),
        (ValueError("bug"), "internal_error"),
    ],
)
def test_every_error_maps_to_one_core_stop_reason(error: BaseException, reason: str) -> None:
    assert stop_reason_for(error) == reason
    assert reason in CORE_STOP_REASONS


def test_run_ids_are_sixteen_hex_digits() -> None:
    run_id = new_run_id()
    assert run_id.startswith("run-") and len(run_id) == 16 and int(run_id[4:], 16) >= 0
    assert run_id != new_run_id()


def test_a_phase_event_has_the_fixed_fields_the_standing_ones_and_its_data() -> None:
    clock = Clock()
    k = kernel(run_id="r1", clock=clock, standing=lambda: {"iteration": 2})
    clock.now += 1.25
    event = k.phase("plan", queries=["a"])
    assert event.kind == "phase" and event.step == "demo"
    assert event.data == {
        "phase": "plan",
        "run_id": "r1",
        "t": 1.25,
        "iteration": 2,
        "queries": ["a"],
    }
    assert set(FIXED_FIELDS) <= set(event.data)
    assert phase_record(event) == {"step": "demo", **event.data}


async def test_attempt_turns_a_run_error_into_a_stop_with_its_reason() -> None:
    async def fails() -> None:
        raise BudgetExceeded("token limit 9 reached", Usage())

    with pytest.raises(Stop) as stopped:
        await kernel().attempt("reflect", fails())
    assert stopped.value.reason == "budget_exhausted" and stopped.value.phase == "reflect"
    assert isinstance(stopped.value.error, BudgetExceeded)


async def test_attempt_lets_user_mistakes_and_bugs_through() -> None:
    async def misconfigured() -> None:
        raise ConfigError("no such corpus")

    with pytest.raises(ConfigError):
        await kernel().attempt("search", misconfigured())


async def test_attempt_returns_what_the_work_returns() -> None:
    async def work() -> int:
        return 7

    assert await kernel().attempt("act", work()) == 7


async def test_the_model_is_metered_against_the_run_budget() -> None:
    from guardsearch.core.messages import Message, ModelRequest

    k = kernel()
    await k.metered.complete(ModelRequest(messages=(Message("user", "hi"),), max_tokens=4))
    assert k.budget.used.calls == 1 and k.metered.trace is k.trace


def test_finish_emits_run_end_and_returns_the_shared_outcome_fields() -> None:
    clock = Clock()
    trace = Trace()
    k = kernel(trace=trace, run_id="r2", clock=clock)
    clock.now += 3
    fields = k.finish("max_iterations", items=2)
    assert fields == {
        "stop_reason": "max_iterations",
        "usage": Usage(),
        "seconds": 3.0,
        "run_id": "r2",
        "trace": trace,
    }
    (end,) = trace.of_kind("run_end")  # the one end event, as a search's
    assert trace.events[-1] is end and end.step == "demo"
    assert end.data["run_id"] == "r2" and end.data["t"] == 3.0 and "phase" not in end.data
    assert end.data["stop_reason"] == "max_iterations" and end.data["items"] == 2


def test_a_run_may_start_its_clock_before_the_kernel_exists() -> None:
    clock = Clock()
    k = kernel(clock=clock, started=clock.now - 2)  # e.g. the request's checks took 2 s
    assert k.elapsed() == 2


def test_every_run_opens_with_run_start_and_ends_with_run_end() -> None:
    """One vocabulary for every run: a loop's run_start comes by itself before its first
    phase (or its end); a search's says its strategy (search/run.py calls `start`)."""
    trace = Trace()
    loop = kernel(trace=trace, run_id="r1")
    loop.phase("plan")
    loop.phase("act")
    loop.finish("success")
    assert [(e.kind, e.step) for e in trace.events] == [
        ("run_start", "demo"),
        ("phase", "demo"),
        ("phase", "demo"),
        ("run_end", "demo"),
    ]
    assert {e.data["run_id"] for e in trace.events} == {"r1"}
    empty = Trace()
    kernel(trace=empty).finish("invalid_request")  # refused before any phase
    assert [e.kind for e in empty.events] == ["run_start", "run_end"]
    searched = Trace()
    run_search_sync(  # a search on the same kernel: its start carries the strategy
        MoveSpace(
            objective="reach 8", start=5, moves={"+3": lambda n: n + 3}, goal=lambda n: n == 8
        ),
        strategy="bfs",
        model=ScriptedModel(["+3"]),
        trace=searched,
    )
    first, last = searched.events[0], searched.events[-1]
    assert (first.kind, first.step, first.data["strategy"]) == ("run_start", "search", "bfs")
    assert (last.kind, last.step, last.data["stop_reason"]) == ("run_end", "search", "success")
    assert first.data["run_id"] == last.data["run_id"]
