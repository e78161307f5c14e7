"""A free task: the four steps on the task's text alone, judged by the guards that need
no problem spec: the step guards, the Minimal plan guard and the task's spec."""

from __future__ import annotations

import json

import pytest
from plan_helpers import P, R, step_of

from guardsearch import Artifact, ConfigError, Context, ModelRequest, ScriptedModel
from guardsearch.apps.plan import PlanSpace, plan_guard, plan_problem, plan_search
from guardsearch.apps.plan.step_guards import AnalysisGuard, ReconGuard, StrategyGuard

TASK = "Rotate the API signing keys without downtime"
GOOD = {
    "analysis": json.dumps({"problem_class": "operations_runbook", "key_facts": ["keys_rotated"]}),
    "recon": json.dumps({"actions": ["issue_new_key", "deploy_new_key", "revoke_old_key"]}),
    "strategy": json.dumps(
        {
            "approach": "overlap the keys",
            "rationale": "both keys work while the new one rolls out",
            "order": ["issue_new_key", "deploy_new_key", "revoke_old_key"],
        }
    ),
    "plan": json.dumps(
        {
            "steps": [
                {
                    "id": "s1",
                    "action": "issue_new_key",
                    "detail": "a new API signing key pair",
                    "retry_budget": 1,
                },
                {
                    "id": "s2",
                    "action": "deploy_new_key",
                    "detail": "to the web servers",
                    "retry_budget": 2,
                },
                {
                    "id": "s3",
                    "action": "revoke_old_key",
                    "detail": "after the rollout",
                    "retry_budget": 1,
                },
            ]
        }
    ),
}


def scripted(**queues: list[str]) -> tuple[ScriptedModel, list[str]]:
    calls: list[str] = []

    def answer(request: ModelRequest) -> str:
        step = step_of(request)
        calls.append(step)
        queue = queues.get(step)
        return queue.pop(0) if queue else GOOD[step]

    return ScriptedModel(answer), calls


async def test_a_free_task_runs_the_four_steps_on_its_text() -> None:
    model, calls = scripted()
    result = await plan_search(None, task=TASK, model=model, guard_level="minimal")
    assert result.succeeded and calls == ["analysis", "recon", "strategy", "plan"]
    first = model.requests[0].messages[0].content
    assert first.startswith(f"Primary objective: {TASK}")
    assert "Actions:" not in first and "R_max" not in first  # no problem spec to show
    # Under the minimal guard the plan may only use what recon listed (the schema narrows
    # like a problem's); the task guard leaves the names to the plan (below).
    plan_schema = model.requests[3].json_schema
    assert plan_schema is not None
    action = plan_schema["properties"]["steps"]["items"]["properties"]["action"]
    assert action["enum"] == ["issue_new_key", "deploy_new_key", "revoke_old_key"]


async def test_the_minimal_guard_checks_a_free_plan_against_recons_actions() -> None:
    stray = json.dumps({"steps": [{"id": "s1", "action": "drop_database", "retry_budget": 1}]})
    zero = json.dumps({"steps": [{"id": "s1", "action": "issue_new_key", "retry_budget": 0}]})
    model, calls = scripted(plan=[stray, zero])
    result = await plan_search(None, task=TASK, model=model, guard_level="minimal")
    assert result.succeeded
    assert calls == ["analysis", R, "strategy", P, P, P]
    feedback = [n.verdict.feedback for n in result.tree if n.step == P and n.verdict]
    assert "is not one of the actions recon listed" in feedback[0]
    assert "retry_budget <= 0" in feedback[1]


async def test_plan_problem_reports_the_guard_level_that_ran() -> None:
    model, _ = scripted()
    out = await plan_problem(None, task=TASK, model=model)
    assert out["succeeded"] and out["problem"] is None and out["category"] is None
    assert out["guard_level"] == "task" and out["guard_note"].startswith("free task")
    assert out["spec"]["kind"] == "operations_runbook"
    assert out["task"] == TASK


@pytest.mark.parametrize("level", ["medium", "expansive"])
async def test_a_free_task_cannot_have_a_guard_that_needs_a_problem(level: str) -> None:
    model, _ = scripted()
    with pytest.raises(ConfigError, match="needs a problem's initial state, goal and actions"):
        await plan_problem(None, task=TASK, model=model, guard_level=level)
    with pytest.raises(ConfigError, match="needs a problem"):
        plan_guard(None, level)
    with pytest.raises(ConfigError, match="needs a problem"):
        PlanSpace.build(None, task=TASK, guard_level=level)


async def test_a_free_task_needs_its_text() -> None:
    model, _ = scripted()
    with pytest.raises(ConfigError, match="free task needs its text"):
        await plan_search(None, task="  ", model=model)


def _artifact(step: str, value: object) -> Artifact:
    return Artifact(id=step, step=step, text=json.dumps(value), value=value)


async def test_the_free_step_guards_check_what_needs_no_problem() -> None:
    ctx = Context(objective=TASK).amend(artifact=("recon", GOOD["recon"]))
    analysis, recon, strategy = AnalysisGuard(None), ReconGuard(None), StrategyGuard(None)
    bad_fact = {"problem_class": "operations_runbook", "key_facts": ["Keys Rotated"]}
    assert (
        "not short lower_snake_case"
        in (await analysis.check(_artifact("analysis", bad_fact), ctx)).feedback
    )
    assert (await analysis.check(_artifact("analysis", json.loads(GOOD["analysis"])), ctx)).passed
    assert (await recon.check(_artifact("recon", {"actions": []}), ctx)).feedback == (
        "recon lists no actions"
    )
    assert (await recon.check(_artifact("recon", json.loads(GOOD["recon"])), ctx)).passed
    off = {"approach": "just do it", "rationale": "it is the fastest way", "order": ["reboot"]}
    verdict = await strategy.check(_artifact("strategy", off), ctx)
    assert "which recon did not list" in verdict.feedback


async def test_under_the_task_guard_the_plan_names_its_own_actions() -> None:
    own = json.dumps(
        {"steps": [{"id": "s1", "action": "generate_key_pair", "detail": "a new API signing key",
                    "retry_budget": 1}]}
    )  # fmt: skip
    model, calls = scripted(plan=[own])
    result = await plan_search(None, task=TASK, model=model)
    assert result.succeeded and calls == ["analysis", "recon", "strategy", "plan"]
    action = model.requests[3].json_schema["properties"]["steps"]["items"]["properties"]["action"]
    assert "enum" not in action and action["pattern"]


async def test_free_recon_drops_names_that_are_no_action_and_keeps_the_rest() -> None:
    listed = json.dumps(
        {"actions": ["budget", "issue_new_key", "deploy_new_key", "revoke_old_key"]}
    )
    model, calls = scripted(recon=[listed])
    result = await plan_search(None, task=TASK, model=model)
    assert result.succeeded and calls == ["analysis", "recon", "strategy", "plan"]
    recon = next(n for n in result.tree if n.step == "recon" and n.verdict and n.verdict.passed)
    assert recon.value == {"actions": ["issue_new_key", "deploy_new_key", "revoke_old_key"]}
