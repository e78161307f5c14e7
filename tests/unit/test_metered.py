"""Metered: every model call goes reserve -> execute -> reconcile, and is traced."""

from __future__ import annotations

import asyncio

import pytest

from guardsearch import (
    Budget,
    BudgetExceeded,
    Completion,
    Message,
    Metered,
    ModelError,
    ModelRequest,
    ScriptedModel,
    Usage,
    max_calls,
    max_tokens,
)

REQUEST = ModelRequest(messages=(Message("system", "be brief"), Message("user", "say hi")))
PROMPT_WORDS = 4  # the scripted model counts words as tokens


async def test_a_call_is_booked_with_its_actual_usage() -> None:
    metered = Metered(ScriptedModel(["hello there"]), Budget(max_tokens(1000)))
    await metered.complete(REQUEST)
    assert metered.usage == Usage(calls=1, prompt_tokens=PROMPT_WORDS, completion_tokens=2)


async def test_the_reservation_is_closed_after_the_call() -> None:
    budget = Budget(max_tokens(1000))
    await Metered(ScriptedModel(["hello"]), budget).complete(REQUEST)
    assert budget.reserved == Usage()
    assert budget.open_reservations == 0


async def test_a_call_emits_reserve_reconcile_and_model_call_events_in_order() -> None:
    metered = Metered(ScriptedModel(["hello"]))
    await metered.complete(REQUEST, step="greet", node="n1")
    assert [e.kind for e in metered.trace.events] == [
        "budget_reserve",
        "budget_reconcile",
        "model_call",
    ]
    assert {(e.step, e.node) for e in metered.trace.events} == {("greet", "n1")}


async def test_the_reserve_event_records_the_booked_upper_bound() -> None:
    metered = Metered(ScriptedModel(["hello"]), Budget(max_tokens(100)))
    await metered.complete(REQUEST)
    (reserve,) = metered.trace.of_kind("budget_reserve")
    assert reserve.data["prompt_tokens"] == PROMPT_WORDS
    assert reserve.data["completion_tokens"] == 100 - PROMPT_WORDS


async def test_the_reconcile_event_records_the_refund() -> None:
    metered = Metered(ScriptedModel(["hello"]), Budget(max_tokens(100)))
    await metered.complete(REQUEST)
    (reconcile,) = metered.trace.of_kind("budget_reconcile")
    assert reconcile.data["refund_tokens"] == 100 - PROMPT_WORDS - 1


async def test_the_model_call_event_records_usage_and_the_request_digest() -> None:
    metered = Metered(ScriptedModel(["hello"]))
    await metered.complete(REQUEST)
    (call,) = metered.trace.of_kind("model_call")
    assert call.data["model"] == "scripted"
    assert call.data["digest"] == REQUEST.digest()
    assert (call.data["prompt_tokens"], call.data["completion_tokens"]) == (PROMPT_WORDS, 1)


async def test_max_tokens_is_clamped_to_what_the_budget_can_grant() -> None:
    model = ScriptedModel(["hello"])
    await Metered(model, Budget(max_tokens(50))).complete(REQUEST)
    assert model.requests[0].max_tokens == 50 - PROMPT_WORDS


async def test_max_tokens_is_untouched_when_the_budget_has_room() -> None:
    model = ScriptedModel(["hello"])
    await Metered(model, Budget(max_tokens(10_000))).complete(REQUEST)
    assert model.requests[0] == REQUEST


async def test_an_exceeded_budget_stops_before_the_model_is_called() -> None:
    model = ScriptedModel(["hello"])
    metered = Metered(model, Budget(max_calls(0)))
    with pytest.raises(BudgetExceeded):
        await metered.complete(REQUEST)
    assert model.calls == 0
    assert [e.kind for e in metered.trace.events] == ["budget_exceeded"]


async def test_a_model_exception_is_booked_as_one_call_and_surfaces_as_model_error() -> None:
    budget = Budget()
    metered = Metered(ScriptedModel([RuntimeError("connection reset")]), budget)
    with pytest.raises(ModelError, match="connection reset"):
        await metered.complete(REQUEST)
    assert budget.used == Usage(calls=1)
    assert budget.reserved == Usage()
    assert budget.open_reservations == 0


async def test_a_model_exception_is_traced_as_a_model_error_event() -> None:
    metered = Metered(ScriptedModel([RuntimeError("connection reset")]))
    with pytest.raises(ModelError):
        await metered.complete(REQUEST)
    (event,) = metered.trace.of_kind("model_error")
    assert event.data["error_type"] == "RuntimeError"


async def test_a_library_error_from_the_model_is_raised_unchanged() -> None:
    original = ModelError("backend says no")
    with pytest.raises(ModelError) as caught:
        await Metered(ScriptedModel([original])).complete(REQUEST)
    assert caught.value is original


async def test_a_completion_without_call_count_is_booked_as_one_call() -> None:
    answer = Completion(text="hi", usage=Usage(prompt_tokens=3, completion_tokens=1))
    metered = Metered(ScriptedModel([answer]))
    await metered.complete(REQUEST)
    assert metered.usage.calls == 1


async def test_metered_takes_the_name_of_the_model_it_wraps() -> None:
    assert Metered(ScriptedModel([], name="tiny")).name == "tiny"


async def test_a_cancelled_call_closes_its_reservation_and_counts_as_one_call() -> None:
    started = asyncio.Event()

    async def hang(request: ModelRequest) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    budget = Budget(max_tokens(1000))
    task = asyncio.create_task(Metered(ScriptedModel(hang), budget).complete(REQUEST))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert budget.open_reservations == 0
    assert budget.reserved == Usage()
    assert budget.used == Usage(calls=1)
