"""The upstream steps' guards: analysis, recon and strategy, on hand-made outputs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from plan_helpers import PLAIN

from guardsearch import Artifact, Context, GuardResult
from guardsearch.apps.plan import get_problem, plan_step
from guardsearch.apps.plan.step_guards import earlier, recon_actions
from guardsearch.guards.constraints import constraint_names
from guardsearch.guards.diff import apply_patch
from guardsearch.models.scripted import ScriptedModel
from guardsearch.steps.step import run_step

PROBLEM = get_problem(PLAIN)


async def judge(step: str, value: Any, context: Context | None = None) -> GuardResult:
    the_step = plan_step(step, PROBLEM)
    text = json.dumps(value)
    artifact = Artifact(id="a", step=step, text=text, value=the_step.parse(text))
    assert the_step.checker is not None
    return await the_step.checker.check(artifact, context or Context(objective="x"))


def with_recon(actions: list[str]) -> Context:
    return Context(objective="x").amend(artifact=("recon", json.dumps({"actions": actions})))


async def test_analysis_passes_with_a_class_and_problem_facts() -> None:
    verdict = await judge("analysis", {"problem_class": "bug_fix", "key_facts": ["cause_found"]})
    assert verdict.passed


@pytest.mark.parametrize(
    ("value", "feedback"),
    [
        ({"key_facts": ["cause_found"]}, "missing required field"),
        ({"problem_class": "chore", "key_facts": ["cause_found"]}, "is not one of"),
        ({"problem_class": "bug_fix", "key_facts": []}, "should be non-empty"),
        ({"problem_class": "bug_fix", "key_facts": ["unicorns"]}, "is not one of"),
    ],
)
async def test_analysis_rejects(value: dict[str, Any], feedback: str) -> None:
    verdict = await judge("analysis", value)
    assert not verdict.passed and feedback in verdict.feedback


async def test_recon_must_list_actions_that_can_reach_the_goal() -> None:
    enough = ["rerun_report", "convert_to_utc", "find_timezone_bug"]  # any order will do
    assert (await judge("recon", {"actions": enough})).passed
    # A giver of the goal fact is not enough when what it needs is out of reach.
    short = await judge("recon", {"actions": ["find_timezone_bug", "rerun_report"]})
    assert short.feedback == (
        "the listed actions cannot reach goal fact(s) {report_fixed} from the initial facts: "
        "no listed action gives {code_fixed}. Fix: also list convert_to_utc "
        "(convert_to_utc gives code_fixed)"
    )
    assert short.patch == ({"op": "add", "path": "/actions/-", "value": "convert_to_utc"},)
    missing = await judge("recon", {"actions": ["find_timezone_bug", "clear_cache"]})
    assert missing.feedback.startswith(
        "the listed actions cannot reach goal fact(s) {report_fixed} from the initial facts: "
        "no listed action gives {report_fixed}. Fix: also list rerun_report, convert_to_utc"
    )


async def test_a_recon_repair_adds_the_missing_actions_without_a_model_call() -> None:
    step = plan_step("recon", PROBLEM)
    model = ScriptedModel([json.dumps({"actions": ["clear_cache", "rerun_report"]})])
    outcome = await run_step(step, Context(objective="x"), model)
    assert outcome.value == {
        "actions": ["clear_cache", "rerun_report", "convert_to_utc", "find_timezone_bug"]
    }
    assert outcome.steering.repairs == 1 and len(model.requests) == 1


async def test_recon_rejects_actions_the_problem_does_not_have() -> None:
    verdict = await judge("recon", {"actions": ["rerun_report", "reboot"]})
    assert not verdict.passed and "'reboot' is not one of" in verdict.feedback


async def test_strategy_needs_a_named_approach_a_rationale_and_recons_actions() -> None:
    good = {
        "approach": "fix in UTC",
        "rationale": "the dates shift because of the timezone",
        "order": ["find_timezone_bug", "convert_to_utc", "rerun_report"],
    }
    context = with_recon(["find_timezone_bug", "convert_to_utc", "rerun_report"])
    assert (await judge("strategy", good, context)).passed
    bad = {**good, "approach": "!!!", "rationale": "because it!"}
    verdict = await judge("strategy", bad, context)
    assert verdict.feedback == (
        "approach must name one approach in a few words; "
        "rationale must say in a sentence why the approach fits"
    )
    narrow = with_recon(["find_timezone_bug", "rerun_report"])
    verdict = await judge("strategy", good, narrow)
    assert verdict.feedback == "order uses {convert_to_utc}, which recon did not list"


async def test_a_strategy_whose_order_does_not_run_is_told_the_order_that_does() -> None:
    listed = ["find_timezone_bug", "convert_to_utc", "rerun_report", "clear_cache"]
    context = with_recon(listed)
    value = {
        "approach": "fix in UTC",
        "rationale": "the dates shift because of the timezone",
        "order": ["rerun_report", "find_timezone_bug"],
    }
    verdict = await judge("strategy", value, context)
    assert verdict.feedback == (
        "in the order, rerun_report needs code_fixed, which no earlier action gives. "
        "Fix: order find_timezone_bug, convert_to_utc, rerun_report"
    )
    assert verdict.patch is not None
    fixed = apply_patch(value, verdict.patch)
    assert fixed["order"] == ["find_timezone_bug", "convert_to_utc", "rerun_report"]
    assert (await judge("strategy", fixed, context)).passed
    # Only recon's actions: with convert_to_utc unlisted no order runs, so no patch.
    narrow = with_recon(["find_timezone_bug", "rerun_report"])
    stuck = await judge("strategy", value, narrow)
    assert not stuck.passed and stuck.patch is None


def test_the_strategy_guard_declares_recons_actions_as_a_constraint() -> None:
    step = plan_step("strategy", PROBLEM)
    schema = step.schema_for(with_recon(["rerun_report", "convert_to_utc"]))
    assert schema is not None
    assert schema["properties"]["order"]["items"]["enum"] == ["convert_to_utc", "rerun_report"]
    assert constraint_names(schema) == ["strategy"]
    unconstrained = step.schema_for(Context(objective="x"))
    assert unconstrained is not None and constraint_names(unconstrained) == []


def test_earlier_reads_an_earlier_steps_json_output() -> None:
    context = with_recon(["a", "b"]).amend(artifact=("strategy", "not json"))
    assert recon_actions(earlier(context, "recon")) == ["a", "b"]
    assert earlier(context, "strategy") is None
    assert earlier(context, "analysis") is None
    assert recon_actions("nope") is None
