"""The upstream steps' guards: analysis, recon and strategy, on hand-made outputs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from plan_helpers import PLAIN

from guardsearch import Artifact, Context, GuardResult
from guardsearch.apps.plan import get_problem, plan_step
from guardsearch.apps.plan.step_guards import earlier, recon_actions

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


async def test_recon_must_find_an_action_for_every_goal_fact() -> None:
    ok = await judge("recon", {"actions": ["find_timezone_bug", "rerun_report"]})
    assert ok.passed
    missing = await judge("recon", {"actions": ["find_timezone_bug", "clear_cache"]})
    assert missing.feedback == (
        "recon lists no action that gives goal fact(s) {report_fixed}; "
        "list the actions that produce them"
    )


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


def test_earlier_reads_an_earlier_steps_json_output() -> None:
    context = with_recon(["a", "b"]).amend(artifact=("strategy", "not json"))
    assert recon_actions(earlier(context, "recon")) == ["a", "b"]
    assert earlier(context, "strategy") is None
    assert earlier(context, "analysis") is None
    assert recon_actions("nope") is None
