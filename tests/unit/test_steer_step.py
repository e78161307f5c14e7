"""Feedback that steers a guarded step (issue 16): prevent, repair, diversify, counted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from guardsearch import (
    Context,
    GuardResult,
    Metered,
    ScriptedModel,
    Step,
    StepFailed,
    all_of,
    guard,
    hard,
    member,
    run_step,
    weighted,
)
from guardsearch.core.schedule import Schedule
from guardsearch.core.steering import Steering
from guardsearch.guards.constraints import (
    Conflict,
    compile_constraints,
    constraint_names,
    declared_constraints,
    enum_location,
    exclude_values,
    merge_fragment,
)
from guardsearch.guards.diff import make_patch

CTX = Context(objective="Name a colour of the rainbow")
COLOURS = ["red", "orange", "yellow", "green", "blue"]
CHOICE = {
    "type": "object",
    "properties": {"colour": {"type": "string", "enum": COLOURS}},
    "required": ["colour"],
    "additionalProperties": False,
}
IDS = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "ids": {"type": "array", "items": {"type": "integer"}},
    },
    "required": ["answer", "ids"],
}


class Counting:
    """A guard that wants `want` and counts how often it ran."""

    name = "wants"

    def __init__(self, want: str) -> None:
        self.want, self.seen = want, []  # type: list[Any]

    async def check(self, artifact: Any, context: Context) -> GuardResult:
        self.seen.append(artifact.value)
        if artifact.value == self.want:
            return GuardResult.ok(self.name)
        return GuardResult.fail(f"say {self.want}, not {artifact.value!r}", self.name)


def pick(colour: str) -> str:
    return json.dumps({"colour": colour})


# -- diversify ----------------------------------------------------------------------------


async def test_an_output_repeating_an_earlier_attempt_is_dropped_before_any_guard() -> None:
    judge = Counting("red")
    metered = Metered(ScriptedModel(["blue", "blue", "red"]))
    step = Step(name="colour", prompt="Answer with one colour.", guard=judge)
    outcome = await run_step(step, CTX, metered)
    assert outcome.value == "red" and outcome.attempts == 3
    assert judge.seen == ["blue", "red"]  # the second "blue" never reached the guard
    [dropped] = metered.trace.of_kind("candidate_dropped")
    assert dropped.data["reason"] == "duplicate" and dropped.data["repeats_attempt"] == 1
    assert outcome.steering == Steering(outputs=3, repeats=1)
    assert outcome.steering.repeat_share == pytest.approx(1 / 3)
    assert outcome.feedback == ("say red, not 'blue'",)  # a repeat is no new feedback
    assert Steering.from_events(metered.trace.events) == outcome.steering


async def test_a_repeat_that_uses_up_the_attempts_fails_the_step_with_the_count() -> None:
    model = ScriptedModel(["blue"], repeat_last=True)
    step = Step(name="colour", prompt="Answer.", guard=Counting("red"), rmax=3)
    with pytest.raises(StepFailed) as caught:
        await run_step(step, CTX, model)
    assert caught.value.attempts == 3 and model.calls == 3
    assert caught.value.steering == Steering(outputs=3, repeats=2)
    assert caught.value.evidence()["steering"]["repeats"] == 2


async def test_attempts_follow_the_default_schedule_with_fresh_seeds() -> None:
    model = ScriptedModel(["blue", "green", "violet"])
    with pytest.raises(StepFailed):
        await run_step(Step(name="c", prompt="Answer.", guard=Counting("red")), CTX, model)
    assert [r.temperature for r in model.requests] == [0.0, 0.7, 1.0]
    assert [r.seed for r in model.requests] == [0, 1, 2]


async def test_the_schedule_is_set_per_step_and_floors_the_steps_temperature() -> None:
    model = ScriptedModel(["a", "b", "c"])
    step = Step(name="c", prompt="Answer.", guard=Counting("z"), seed=7, schedule=[0.2, 0.5])
    with pytest.raises(StepFailed):
        await run_step(step, CTX, model)
    assert [(r.temperature, r.seed) for r in model.requests] == [(0.2, 7), (0.5, 8), (0.5, 9)]

    warm = ScriptedModel(["a", "b", "c"])
    with pytest.raises(StepFailed):
        await run_step(Step(name="c", prompt=".", guard=Counting("z"), temperature=0.9), CTX, warm)
    assert [r.temperature for r in warm.requests] == [0.9, 0.9, 1.0]


async def test_a_fixed_schedule_repeats_the_first_attempts_sampling() -> None:
    model = ScriptedModel(["a", "b", "c"])
    step = Step(name="c", prompt="Answer.", guard=Counting("z"), schedule=Schedule.fixed())
    with pytest.raises(StepFailed):
        await run_step(step, CTX, model)
    assert [(r.temperature, r.seed) for r in model.requests] == [(0.0, 0)] * 3


def test_a_schedule_is_checked_when_it_is_given() -> None:
    assert Schedule.of("fixed") == Schedule.fixed()
    assert Schedule.of(None) == Schedule() == Schedule.of("default")
    from guardsearch import ConfigError

    with pytest.raises(ConfigError, match="schedule"):
        Schedule.of("warm")
    with pytest.raises(ConfigError, match=r"0\.\.2"):
        Schedule((0.0, 3.0))


async def test_the_retry_prompt_lists_what_was_rejected_with_its_feedback() -> None:
    model = ScriptedModel(["blue", "green", "red"])
    await run_step(Step(name="c", prompt="Answer.", guard=Counting("red")), CTX, model)
    third = model.requests[2].messages[0].content
    retry = third.split("## Your previous output for this step was rejected", 1)[1]
    assert "- attempt 1: say red, not 'blue'" in retry
    assert "- attempt 2: say red, not 'green'" in retry
    assert "Already answered at this step (give a different answer):\n- blue\n- green" in retry


async def test_an_enum_that_decides_the_output_loses_the_values_already_tried() -> None:
    model = ScriptedModel([pick("red"), pick("green"), pick("blue")])
    step = Step(name="c", prompt="Pick.", schema=CHOICE, guard=lambda v: v["colour"] == "blue")
    outcome = await run_step(step, CTX, model)
    assert outcome.value == {"colour": "blue"}
    enums = [r.json_schema["properties"]["colour"]["enum"] for r in model.requests]  # type: ignore[index]
    assert enums == [COLOURS, ["orange", "yellow", "green", "blue"], ["orange", "yellow", "blue"]]


def test_only_an_enum_that_decides_the_whole_output_is_narrowed() -> None:
    assert enum_location(CHOICE) == ["colour"]
    assert enum_location({"enum": [1, 2, 3]}) == []
    two = {**CHOICE, "properties": {**CHOICE["properties"], "n": {"enum": [1, 2]}}}
    two["required"] = ["colour", "n"]
    assert enum_location(two) is None  # two things vary: excluding one value is wrong
    assert enum_location({**CHOICE, "additionalProperties": True}) is None
    fixed = {**two, "properties": {**two["properties"], "n": {"const": 1}}}
    assert enum_location(fixed) == ["colour"]
    assert exclude_values(CHOICE, [{"colour": c} for c in COLOURS]) is None  # all tried
    assert exclude_values(IDS, [{"answer": "x", "ids": []}]) == IDS  # not enumerable


# -- prevent ------------------------------------------------------------------------------


def cites(ids: list[int]) -> Any:
    """A user's guard whose rule is partly a shape: cite at least one retrieved id."""

    @guard(constraint={"properties": {"ids": {"minItems": 1, "items": {"enum": ids}}}})
    def cites_retrieved(value: dict[str, Any]) -> bool | str:
        bad = [i for i in value["ids"] if i not in ids]
        if not value["ids"] or bad:
            return f"cite one of the retrieved sources {ids}, not {bad or 'none'}"
        return True

    return cites_retrieved


async def test_an_enum_constraint_declared_by_a_guard_appears_in_the_request_schema() -> None:
    model = ScriptedModel(['{"answer": "Vladimir", "ids": [2]}'])
    step = Step(name="answer", prompt="Answer.\n{{ schema }}", schema=IDS, guard=cites([1, 2]))
    await run_step(step, CTX, model)
    sent = model.requests[0].json_schema
    assert sent is not None
    assert sent["properties"]["ids"] == {
        "type": "array",
        "items": {"type": "integer", "enum": [1, 2]},
        "minItems": 1,
    }
    assert constraint_names(sent) == ["cites_retrieved"]
    assert "$comment" not in model.requests[0].messages[-1].content  # the prompt's schema
    assert step.json_schema == IDS  # the step's own schema is untouched


async def test_a_constraint_may_depend_on_the_context() -> None:
    def retrieved(context: Context) -> dict[str, Any]:
        ids = [int(i) for i in context.constraints[0].split(",")]
        return {"properties": {"ids": {"items": {"enum": ids}}}}

    rule = guard(lambda v: True, name="retrieved", constraint=retrieved)
    model = ScriptedModel(['{"answer": "x", "ids": [4]}'])
    ctx = CTX.amend(constraint="4,5")
    await run_step(Step(name="a", prompt=".", schema=IDS, guard=rule), ctx, model)
    assert model.requests[0].json_schema["properties"]["ids"]["items"]["enum"] == [4, 5]  # type: ignore[index]


def test_only_the_guards_that_must_pass_contribute_constraints() -> None:
    a = guard(lambda v: True, name="a", constraint={"minProperties": 1})
    b = guard(lambda v: True, name="b", constraint={"maxProperties": 3})
    names = lambda g: [d.guard for d in declared_constraints(g, CTX)]  # noqa: E731
    assert names(all_of(a, b)) == ["a", "b"]
    assert names(weighted(hard(a), member(b, 1.0))) == ["a"]  # b may fail and still pass


def test_fragments_merge_into_the_schema_and_contradictions_are_left_out() -> None:
    merged = merge_fragment(
        {"type": "object", "properties": {"n": {"type": "integer", "maximum": 9}}, "required": []},
        {"properties": {"n": {"maximum": 5, "minimum": 1}}, "required": ["n"]},
    )
    assert merged["properties"]["n"] == {"type": "integer", "maximum": 5, "minimum": 1}
    assert merged["required"] == ["n"]
    with pytest.raises(Conflict):
        merge_fragment({"enum": [1, 2]}, {"enum": [3]})
    branches = merge_fragment(
        {"anyOf": [{"type": "string"}, {"type": "integer"}]}, {"type": "integer"}
    )
    assert branches == {"anyOf": [{"type": "integer"}]}
    declared = declared_constraints(
        guard(lambda v: True, name="three", constraint={"enum": [3]}), CTX
    )
    schema, used, skipped = compile_constraints({"enum": [1, 2]}, declared)
    assert (schema, used, skipped) == ({"enum": [1, 2]}, [], ["three"])


async def test_outputs_decoded_under_an_enforced_constraint_count_as_prevented() -> None:
    step = Step(name="answer", prompt="Answer.", schema=IDS, guard=cites([1, 2]))
    answer = '{"answer": "Vladimir", "ids": [2]}'
    enforcing = Metered(ScriptedModel([answer], constrained_decoding=True))
    outcome = await run_step(step, CTX, enforcing)
    assert outcome.steering.prevented == 1
    # A backend without constrained decoding: the rule stays a guard, nothing prevented.
    plain = Metered(ScriptedModel(['{"answer": "x", "ids": [7]}', answer]))
    outcome = await run_step(step, CTX, plain)
    assert outcome.steering == Steering(outputs=2)
    assert outcome.feedback == ("cite one of the retrieved sources [1, 2], not [7]",)


# -- repair -------------------------------------------------------------------------------


async def test_a_guards_patch_repairs_without_a_model_call_and_is_counted() -> None:
    @guard
    def must_cite(value: dict[str, Any]) -> GuardResult | bool:
        if value["ids"]:
            return True
        fixed = {**value, "ids": [1]}  # the retrieved source that supports the answer
        return GuardResult.fail("cite the source", patch=make_patch(value, fixed))

    model = ScriptedModel(['{"answer": "Vladimir the Great", "ids": []}'])
    metered = Metered(model)
    step = Step(name="answer", prompt="Answer.", schema=IDS, guard=must_cite)
    outcome = await run_step(step, CTX, metered)
    assert outcome.value == {"answer": "Vladimir the Great", "ids": [1]}
    assert model.calls == 1 and outcome.attempts == 1
    assert outcome.steering == Steering(outputs=1, repairs=1)
    [event] = metered.trace.of_kind("patch_applied")
    assert event.data["passed"] is True and event.data["fixed"] == "cite the source"
    assert event.data["patch"] == [{"op": "add", "path": "/ids/0", "value": 1}]
    stages = [e.data["stage"] for e in metered.trace.of_kind("guard_verdict")]
    assert stages == ["evaluate", "repair"]  # the re-check is no new output


async def test_a_repair_whose_result_carries_another_fix_is_repaired_again() -> None:
    def step_by_step(value: dict[str, int]) -> GuardResult | bool:
        if value["n"] >= 3:
            return True
        return GuardResult.fail(
            "raise n", patch=[{"op": "replace", "path": "/n", "value": value["n"] + 1}]
        )

    model = ScriptedModel(['{"n": 1}'])
    metered = Metered(model)
    step = Step(name="n", prompt=".", schema={"type": "object"}, guard=step_by_step)
    outcome = await run_step(step, CTX, metered)
    assert outcome.value == {"n": 3} and model.calls == 1
    assert [e.data["passed"] for e in metered.trace.of_kind("patch_applied")] == [False, True]
    assert outcome.steering.repairs == 1
