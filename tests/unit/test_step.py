"""The guarded step: prompt -> model -> parse -> guard -> retry with feedback."""

from __future__ import annotations

import pytest

from guardsearch import (
    Budget,
    BudgetExceeded,
    ConfigError,
    Context,
    GuardResult,
    Metered,
    PromptTemplate,
    ScriptedModel,
    Step,
    StepFailed,
    max_calls,
    run_step,
    run_step_sync,
)

CTX = Context(objective="Name a colour of the rainbow")
RETRY_HEADER = "## Your previous output for this step was rejected"
N_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def is_red(value: str) -> bool | str:
    return value == "red" or f"say red, not {value!r}"


def colour_step(rmax: int = 3) -> Step:
    return Step(name="colour", prompt="Answer with one colour.", guard=is_red, rmax=rmax)


def n_is_two(value: dict[str, int]) -> GuardResult | bool:
    if value["n"] == 2:
        return True
    return GuardResult(
        passed=False,
        feedback="n must be 2",
        patch=({"op": "replace", "path": "/n", "value": 2},),
    )


async def test_a_passing_first_answer_ends_the_step_after_one_call() -> None:
    model = ScriptedModel(["red"])
    outcome = await run_step(colour_step(), CTX, model)
    assert outcome.value == "red"
    assert outcome.attempts == 1
    assert outcome.feedback == ()
    assert model.calls == 1


async def test_a_failed_answer_is_retried_and_the_retry_succeeds() -> None:
    model = ScriptedModel(["blue", "red"])
    outcome = await run_step(colour_step(), CTX, model)
    assert outcome.value == "red"
    assert outcome.attempts == 2
    assert outcome.feedback == ("say red, not 'blue'",)


async def test_the_retry_prompt_carries_the_first_feedback_in_the_retry_channel() -> None:
    model = ScriptedModel(["blue", "red"])
    await run_step(colour_step(), CTX, model)
    first, second = (r.messages[0].content for r in model.requests)
    assert RETRY_HEADER not in first
    retry_section = second.split(RETRY_HEADER, 1)[1]
    assert "- attempt 1: say red, not 'blue'" in retry_section


async def test_the_outcome_context_holds_the_feedback_that_led_to_success() -> None:
    outcome = await run_step(colour_step(), CTX, ScriptedModel(["blue", "red"]))
    assert outcome.context.feedback == ("say red, not 'blue'",)
    assert CTX.feedback == ()


async def test_a_fatal_verdict_ends_the_step_at_once() -> None:
    model = ScriptedModel(["blue", "red"])
    step = Step(
        name="colour",
        prompt="Answer.",
        guard=lambda v: GuardResult.fail("the question is unanswerable", fatal=True),
        rmax=5,
    )
    with pytest.raises(StepFailed) as caught:
        await run_step(step, CTX, model)
    assert caught.value.fatal
    assert caught.value.attempts == 1
    assert model.calls == 1


async def test_running_out_of_retries_raises_step_failed_with_the_evidence() -> None:
    model = ScriptedModel(["blue", "green", "violet"])
    with pytest.raises(StepFailed) as caught:
        await run_step(colour_step(rmax=3), CTX, model)
    failure = caught.value
    assert not failure.fatal
    assert failure.attempts == 3
    assert failure.last_artifact is not None
    assert failure.last_artifact.text == "violet"
    assert failure.feedback == [
        "say red, not 'blue'",
        "say red, not 'green'",
        "say red, not 'violet'",
    ]
    assert failure.usage.calls == 3
    assert failure.usage.completion_tokens == 3
    assert failure.usage.prompt_tokens > 0


async def test_step_failed_evidence_is_json_ready() -> None:
    with pytest.raises(StepFailed) as caught:
        await run_step(colour_step(rmax=1), CTX, ScriptedModel(["blue"]))
    evidence = caught.value.evidence()
    assert evidence["last_output"] == "blue"
    assert evidence["usage"]["calls"] == 1


async def test_a_parse_error_is_feedback_for_the_retry() -> None:
    step = Step(name="n", prompt="Give n.", schema=N_SCHEMA)
    model = ScriptedModel(["n is two", '{"n": 2}'])
    outcome = await run_step(step, CTX, model)
    assert outcome.value == {"n": 2}
    assert "not parseable as JSON" in outcome.feedback[0]


async def test_a_schema_step_sends_its_json_schema_with_the_request() -> None:
    model = ScriptedModel(['{"n": 2}'])
    await run_step(Step(name="n", prompt="Give n.", schema=N_SCHEMA), CTX, model)
    assert model.requests[0].json_schema == N_SCHEMA


async def test_a_guards_json_patch_repairs_the_value_without_another_call() -> None:
    model = ScriptedModel(['{"n": 1}'])
    metered = Metered(model)
    step = Step(name="n", prompt="Give n.", schema=N_SCHEMA, guard=n_is_two)
    outcome = await run_step(step, CTX, metered)
    assert outcome.value == {"n": 2}
    assert outcome.attempts == 1
    assert model.calls == 1
    assert [e.data["passed"] for e in metered.trace.of_kind("patch_applied")] == [True]


async def test_a_patch_that_does_not_repair_the_value_falls_back_to_a_retry() -> None:
    def n_is_three(value: dict[str, int]) -> GuardResult | bool:
        if value["n"] == 3:
            return True
        bad_fix = ({"op": "replace", "path": "/n", "value": 2},)
        return GuardResult(passed=False, feedback="n must be 3", patch=bad_fix)

    model = ScriptedModel(['{"n": 1}', '{"n": 3}'])
    step = Step(name="n", prompt="Give n.", schema=N_SCHEMA, guard=n_is_three)
    outcome = await run_step(step, CTX, model)
    assert outcome.value == {"n": 3}
    assert model.calls == 2


async def test_an_inapplicable_patch_falls_back_to_a_retry() -> None:
    def wrong_path(value: dict[str, int]) -> GuardResult | bool:
        if value["n"] == 2:
            return True
        return GuardResult(passed=False, feedback="no", patch=({"op": "remove", "path": "/x"},))

    model = ScriptedModel(['{"n": 1}', '{"n": 2}'])
    step = Step(name="n", prompt="Give n.", schema=N_SCHEMA, guard=wrong_path)
    outcome = await run_step(step, CTX, model)
    assert outcome.attempts == 2
    assert model.calls == 2


async def test_an_exhausted_budget_stops_the_step_before_the_call() -> None:
    model = ScriptedModel(["red"])
    with pytest.raises(BudgetExceeded):
        await run_step(colour_step(), CTX, Metered(model, Budget(max_calls(0))))
    assert model.calls == 0


async def test_the_budget_stops_a_retry_before_its_call_and_carries_the_usage() -> None:
    model = ScriptedModel(["blue", "red"])
    with pytest.raises(BudgetExceeded) as caught:
        await run_step(colour_step(), CTX, Metered(model, Budget(max_calls(1))))
    assert model.calls == 1
    assert caught.value.usage.calls == 1


async def test_every_request_pins_the_objective_first_in_the_first_message() -> None:
    ctx = (
        CTX.amend(artifact=("plan", "look at the sky"))
        .amend(constraint="one word")
        .amend(failure="a later step could not use 'sky'")
        .amend(human_input=("which sky?", "evening"))
    )
    model = ScriptedModel(["blue", "green", "red"])
    await run_step(colour_step(), ctx, model)
    assert model.calls == 3
    for request in model.requests:
        assert request.messages[0].role == "system"
        assert request.messages[0].content.startswith(
            "Primary objective: Name a colour of the rainbow"
        )


async def test_the_step_is_traced_from_start_to_end() -> None:
    metered = Metered(ScriptedModel(["blue", "red"]))
    await run_step(colour_step(), CTX, metered)
    kinds = [e.kind for e in metered.trace.events if e.kind in {"step_start", "retry", "step_end"}]
    assert kinds == ["step_start", "retry", "step_end"]
    assert len(metered.trace.of_kind("guard_verdict")) == 2


async def test_the_outcome_reports_the_steps_own_usage() -> None:
    metered = Metered(ScriptedModel(["red", "red"]))
    await run_step(colour_step(), CTX, metered)
    outcome = await run_step(colour_step(), CTX, metered)
    assert outcome.usage.calls == 1
    assert metered.usage.calls == 2


async def test_a_step_without_guard_accepts_any_non_empty_text() -> None:
    outcome = await run_step(Step(name="free", prompt="Say anything."), CTX, ScriptedModel(["hi"]))
    assert outcome.value == "hi"


async def test_template_variables_are_rendered_into_the_prompt() -> None:
    model = ScriptedModel(["red"])
    step = Step(
        name="colour", prompt=PromptTemplate.inline("Pick a {{ kind }} colour."), guard=is_red
    )
    await run_step(step, CTX, model, variables={"kind": "warm"})
    assert model.requests[0].messages[1].content == "Pick a warm colour."


def test_run_step_sync_runs_the_same_engine() -> None:
    outcome = run_step_sync(colour_step(), CTX, ScriptedModel(["red"]))
    assert outcome.value == "red"


async def test_run_step_sync_inside_a_running_loop_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="inside a running event loop"):
        run_step_sync(colour_step(), CTX, ScriptedModel(["red"]))


def test_rmax_below_one_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="rmax"):
        colour_step(rmax=0)
