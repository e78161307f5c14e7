"""Feedback that steers a search (issue 16): repeats dropped and counted, the schedule per
expansion, repairs and constraints in the engine, the metrics in every result, and the
two feedback channels kept apart."""

from __future__ import annotations

import json
from typing import Any

from search_helpers import ByStep, pipeline, step_of

from guardsearch import Context, GuardResult, ScriptedModel, Step, guard
from guardsearch.core.steering import Steering
from guardsearch.search import StepSpace, search

COLOURS = ["red", "green", "blue"]
CHOICE = {
    "type": "object",
    "properties": {"colour": {"type": "string", "enum": COLOURS}},
    "required": ["colour"],
    "additionalProperties": False,
}
RETRY = "## Your previous output for this step was rejected"
DOWNSTREAM = "## Downstream failures of earlier attempts"


def colour_space(step_guard: Any, **step: Any) -> StepSpace:
    return StepSpace(
        objective="Name a colour",
        steps=[Step(name="colour", prompt="One colour.", guard=step_guard, **step)],
    )


def wants(colour: str) -> Any:
    return lambda v: v == colour or f"say {colour}, not {v!r}"


async def test_a_repeat_at_a_node_is_dropped_unjudged_and_counted_in_the_result() -> None:
    judged: list[str] = []

    def red(value: str) -> bool | str:
        judged.append(value)
        return value == "red" or f"say red, not {value!r}"

    model = ScriptedModel(["blue", "blue", "red"])
    result = await search(colour_space(red), "refine", model=model)
    assert result.succeeded and result.calls == 3
    assert judged == ["blue", "red"]
    assert result.steering == Steering(outputs=3, repeats=1)
    data = result.as_dict()["steering"]
    assert data == {
        "outputs": 3,
        "repeats": 1,
        "repeat_share": 0.3333,
        "repairs": 0,
        "prevented": 0,
    }
    [end] = result.trace.of_kind("run_end")
    assert end.data["steering"]["repeats"] == 1


async def test_expansion_k_of_a_node_follows_the_schedule() -> None:
    model = ScriptedModel(["a", "b", "red"])
    result = await search(colour_space(wants("red")), "refine", model=model)
    assert result.succeeded
    assert [(r.temperature, r.seed) for r in model.requests] == [(0.0, 0), (0.7, 1), (1.0, 2)]
    starts = [e for e in result.trace.of_kind("expansion") if e.data["phase"] == "start"]
    assert [e.data["temperature"] for e in starts] == [0.0, 0.7, 1.0]


async def test_the_schedule_is_set_per_search_or_per_step() -> None:
    fixed = ScriptedModel(["a", "b", "red"])
    await search(colour_space(wants("red")), "refine", model=fixed, schedule="fixed")
    assert [(r.temperature, r.seed) for r in fixed.requests] == [(0.0, 0)] * 3

    per_step = ScriptedModel(["a", "b", "c", "red"])
    space = colour_space(wants("red"), schedule=[0.1, 0.3])
    await search(space, "refine", model=per_step, samples=2)
    # two samples per expansion: seeds move by two per expansion
    assert [(r.temperature, r.seed) for r in per_step.requests][::2] == [(0.1, 0), (0.3, 2)]


async def test_astar_reexpansions_escalate_unless_the_strategy_fixes_a_temperature() -> None:
    model = ScriptedModel(["a", "b", "red"])
    await search(colour_space(wants("red")), "astar", model=model, rmax=3)
    assert [r.temperature for r in model.requests] == [0.0, 0.7, 1.0]
    fixed = ScriptedModel(["a", "b", "red"])
    await search(colour_space(wants("red")), "astar", model=fixed, rmax=3, reexpand_temperature=0.4)
    assert [(r.temperature, r.seed) for r in fixed.requests] == [(0.0, 0), (0.4, 1), (0.4, 2)]


async def test_consensus_candidates_are_independent_samples_not_retries() -> None:
    model = ScriptedModel(["red"], repeat_last=True)
    await search(colour_space(wants("red")), "consensus", model=model, n=3, temperature=0.5)
    assert [(r.temperature, r.seed) for r in model.requests] == [(0.5, 0), (0.5, 1), (0.5, 2)]
    assert all(RETRY not in r.messages[0].content for r in model.requests)


async def test_a_reexpansion_lists_the_nodes_earlier_outputs_and_their_verdicts() -> None:
    model = ScriptedModel(["blue", "green", "red"])
    await search(colour_space(wants("red")), "refine", model=model)
    third = model.requests[2].messages[0].content.split(RETRY, 1)[1]
    assert "- blue -> rejected, as above" in third
    assert "- green -> rejected, as above" in third


async def test_an_enum_deciding_a_step_output_loses_what_the_node_already_had() -> None:
    model = ScriptedModel([json.dumps({"colour": c}) for c in ("red", "green", "blue")])
    space = colour_space(lambda v: v["colour"] == "blue" or "not blue", schema=CHOICE)
    result = await search(space, "refine", model=model)
    assert result.succeeded
    enums = [r.json_schema["properties"]["colour"]["enum"] for r in model.requests]  # type: ignore[index]
    assert enums == [COLOURS, ["green", "blue"], ["blue"]]


async def test_a_guard_declared_constraint_reaches_the_search_request_and_counts() -> None:
    primary = guard(
        lambda v: v["colour"] in ("red", "blue") or "a primary colour",
        name="primary",
        constraint={"properties": {"colour": {"enum": ["red", "blue"]}}},
    )
    model = ScriptedModel([json.dumps({"colour": "red"})], constrained_decoding=True)
    result = await search(colour_space(primary, schema=CHOICE), "refine", model=model)
    assert result.succeeded
    sent = model.requests[0].json_schema
    assert sent is not None and sent["properties"]["colour"]["enum"] == ["red", "blue"]
    assert result.steering == Steering(outputs=1, prevented=1)
    [verdict] = result.trace.of_kind("guard_verdict")
    assert verdict.data["prevented"] is True


async def test_a_repair_in_a_search_costs_no_call_and_is_counted() -> None:
    def two(value: dict[str, int]) -> GuardResult | bool:
        if value["n"] == 2:
            return True
        return GuardResult.fail("n must be 2", patch=[{"op": "replace", "path": "/n", "value": 2}])

    model = ScriptedModel(['{"n": 1}'])
    space = StepSpace(
        objective="Give n",
        steps=[Step(name="n", prompt="n?", schema={"type": "object"}, guard=two)],
    )
    result = await search(space, "dfs", model=model)
    assert result.succeeded and result.answer == {"n": 2} and result.calls == 1
    assert result.steering == Steering(outputs=1, repairs=1)
    [event] = result.trace.of_kind("patch_applied")
    assert event.data["fixed"] == "n must be 2" and event.data["passed"] is True


async def test_resumed_searches_keep_counting_from_the_saved_state() -> None:
    saved: list[dict[str, Any]] = []
    model = ScriptedModel(["blue", "blue"])
    await search(
        colour_space(wants("red")),
        "refine",
        model=model,
        budget=2,
        on_expansion=lambda s: saved.append(s.to_dict()),
    )
    assert saved[-1]["steering"] == {"outputs": 2, "repeats": 1, "repairs": 0, "prevented": 0}
    again = await search(
        colour_space(wants("red")), "refine", model=ScriptedModel(["red"]), resume=saved[-1]
    )
    assert again.succeeded and again.steering == Steering(outputs=3, repeats=1)


async def test_retry_feedback_and_the_backtrack_amendment_stay_in_their_channels() -> None:
    # A plan failure that points at the strategy amends the strategy's
    # context (downstream channel); recon's own retry feedback stays with recon.
    script = ByStep(
        {
            "recon": ["BAD missing required field: 'services'"],
            "plan": ["BAD preconditions {db_ready} not satisfiable"],
        }
    )
    model = script.model()
    result = await search(pipeline(), "dfs", model=model)
    assert result.succeeded
    recon_retry = [r for r in model.requests if step_of(r) == "recon"][1].messages[0].content
    assert RETRY in recon_retry and DOWNSTREAM not in recon_retry
    strategy_again = [r for r in model.requests if step_of(r) == "strategy"][1]
    prompt = strategy_again.messages[0].content
    assert DOWNSTREAM in prompt and "preconditions {db_ready} not satisfiable" in prompt
    assert "missing required field" not in prompt  # recon's retry feedback did not travel
    downstream = prompt.split(DOWNSTREAM, 1)[1]
    assert "A downstream step (plan) failed validation" in downstream


async def test_the_steering_counts_agree_with_the_trace() -> None:
    model = ScriptedModel(["blue", "blue", "red"])
    result = await search(colour_space(wants("red")), "refine", model=model)
    assert Steering.from_events(result.trace.events) == result.steering
    ctx = Context(objective="x")
    assert ctx.amend(tried=("a", "")).for_next_step().tried == ()  # a retry-channel entry
