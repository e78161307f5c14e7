"""Feedback that steers the plan search (issue 16): the reorder repair, feedback that
names the fix, the fix carried upstream on a backtrack, and the action enum."""

from __future__ import annotations

import json
from typing import Any

import pytest
from plan_helpers import (
    PLAIN,
    RISKY,
    A,
    P,
    R,
    S,
    by_step,
    good_outputs,
    good_plan,
    misstated,
    out_of_order,
    over_budget,
    plan_of,
    step_of,
    unsatisfiable,
    without_recovery,
)

from guardsearch import Artifact, Context, ModelRequest, ScriptedModel
from guardsearch.apps.plan import Plan, get_problem, plan_guard, plan_search
from guardsearch.apps.plan.heuristic import FixHeuristic
from guardsearch.apps.plan.plan_format import schema_actions
from guardsearch.apps.plan.repair import move_patch, reorder, reorder_patch
from guardsearch.apps.plan.report import backtracks
from guardsearch.core.guard_result import GuardResult
from guardsearch.guards.diff import apply_patch
from guardsearch.search import Failure
from guardsearch.steps.step import run_step

FULL = [A, R, S, P]


async def verdict_of(problem_id: str, plan: dict[str, Any]):  # type: ignore[no-untyped-def]
    guard = plan_guard(get_problem(problem_id))
    artifact = Artifact(id="p", step="plan", text=json.dumps(plan))
    return await guard.check(artifact, Context(objective="plan"))


# -- the reorder repair ------------------------------------------------------------------


def test_reorder_finds_the_order_that_meets_every_need() -> None:
    problem = get_problem(RISKY)
    plan = Plan.model_validate(
        plan_of(
            "deploy_fix",
            "add_regression_test",
            "reproduce_crash",
            "add_null_check",
            "rollback_release",
            s1="s5",
        )
    )
    # reproduce_crash, add_null_check, add_regression_test, deploy_fix; recovery last.
    assert reorder(problem, plan) == [2, 3, 1, 0, 4]
    assert reorder(problem, Plan.model_validate(good_plan(problem))) is None  # in order
    missing = Plan.model_validate(plan_of("add_null_check", "deploy_fix"))
    assert reorder(problem, missing) is None  # nothing gives crash_reproduced: no order helps


def test_move_patch_puts_the_list_in_the_order() -> None:
    order = [2, 3, 1, 0, 4]
    value = {"steps": ["a", "b", "c", "d", "e"]}
    patch = move_patch(order)
    assert all(op["op"] == "move" for op in patch)
    assert apply_patch(value, patch) == {"steps": ["c", "d", "b", "a", "e"]}


async def test_the_guard_returns_the_reorder_patch_with_its_verdict() -> None:
    problem = get_problem(PLAIN)
    verdict = await verdict_of(PLAIN, json.loads(out_of_order(problem)))
    assert not verdict.passed and "not satisfiable" in verdict.feedback
    assert verdict.patch == reorder_patch(
        problem, Plan.model_validate(json.loads(out_of_order(problem)))
    )
    assert verdict.patch is not None
    # No patch when no order of the plan's steps would do.
    assert (await verdict_of(PLAIN, json.loads(unsatisfiable(problem)))).patch is None


async def test_search_repairs_an_out_of_order_plan_without_a_model_call() -> None:
    problem = get_problem(PLAIN)
    script = by_step(plan=[out_of_order(problem)])
    result = await plan_search(problem, pipeline="search", model=script.model())
    assert result.succeeded
    assert script.calls == FULL  # the plan was written once and repaired, not regenerated
    assert result.answer == good_plan(problem)
    applied = [e for e in result.trace.events if e.kind == "patch_applied"]
    assert len(applied) == 1 and applied[0].data["passed"] is True
    assert [op["op"] for op in applied[0].data["patch"]] == ["move"]
    verdicts = [e for e in result.trace.events if e.kind == "guard_verdict" and e.step == P]
    assert [v.data["stage"] for v in verdicts] == ["repaired"]


async def test_the_single_pipeline_repairs_too() -> None:
    problem = get_problem(RISKY)
    plan = plan_of(
        "rollback_release",
        "reproduce_crash",
        "add_null_check",
        "add_regression_test",
        "deploy_fix",
        s5="s1",
    )
    script = by_step(RISKY, plan=[json.dumps(plan)])
    result = await plan_search(problem, pipeline="single", model=script.model())
    assert result.succeeded and script.calls == [P]
    assert [s["action"] for s in result.answer["steps"]] == [
        "reproduce_crash",
        "add_null_check",
        "add_regression_test",
        "deploy_fix",
        "rollback_release",
    ]


async def test_run_step_applies_the_repair_without_a_second_call() -> None:
    from guardsearch.apps.plan import plan_step

    problem = get_problem(PLAIN)
    model = ScriptedModel([out_of_order(problem), "unused"])
    outcome = await run_step(plan_step("plan", problem), Context(objective="plan"), model)
    assert model.calls == 1 and outcome.attempts == 1
    assert outcome.value["steps"] == good_plan(problem)["steps"]


# -- feedback that names the fix -----------------------------------------------------------


async def test_precondition_feedback_names_the_fix() -> None:
    plan = plan_of("deploy_fix", "reproduce_crash", "add_null_check", "add_regression_test")
    verdict = await verdict_of(RISKY, plan)
    assert verdict.feedback.startswith(
        "preconditions {code_fixed, test_added} of step s1 (deploy_fix) not satisfiable from "
        "the initial state or earlier effects. Fix: put s1 (deploy_fix) after s4 "
        "(add_regression_test) (s3 gives code_fixed, s4 gives test_added)"
    )


async def test_precondition_feedback_names_the_missing_action() -> None:
    plan = plan_of("reproduce_crash", "add_null_check", "deploy_fix")
    verdict = await verdict_of(RISKY, plan)
    assert verdict.feedback.startswith(
        "preconditions {test_added} of step s3 (deploy_fix) not satisfiable from the initial "
        "state or earlier effects. Fix: no step of the plan gives test_added; add a step "
        "add_regression_test (needs code_fixed) before s3 (deploy_fix), which gives test_added"
    )
    assert verdict.patch is None  # no order of these steps gives test_added


async def test_feedback_prefers_an_action_that_can_run() -> None:
    # code_fixed comes from add_null_check or rewrite_auth_module; the latter needs
    # design_approved, which nothing gives: the fix names add_null_check.
    plan = plan_of("reproduce_crash", "add_regression_test")
    verdict = await verdict_of(RISKY, plan)
    assert "add a step add_null_check (needs crash_reproduced) before s2" in verdict.feedback
    assert "rewrite_auth_module" not in verdict.feedback


async def test_the_backtrack_amendment_speaks_to_the_regenerated_step() -> None:
    problem = get_problem(RISKY)
    # The plan leaves out add_regression_test, which deploy_fix needs.
    script = by_step(
        RISKY,
        plan=[json.dumps(plan_of("reproduce_crash", "add_null_check", "deploy_fix"))],
    )
    seen: list[str] = []

    def model(request: ModelRequest) -> str:
        seen.append(request.messages[0].content)
        return script(request)

    # The rule table sends it to the strategy (the fixes heuristic would retry the plan:
    # the strategy's order already runs); without structural repairs, since the guard
    # would put the strategy's add_regression_test back itself (follow.py).
    result = await plan_search(
        problem,
        pipeline="search",
        model=ScriptedModel(model),
        heuristic="rules",
        structural_repairs=False,
    )
    assert result.succeeded
    regenerated = [s for s, step in zip(seen, script.calls, strict=True) if step == S][1]
    # The strategy is told in its own terms (actions, not the plan's step ids).
    assert "**What to change**: In the order, put add_regression_test before deploy_fix." in (
        regenerated
    )
    # ...while the plan's own retry channel names step ids.
    first_plan = next(n for n in result.tree if n.step == P)
    assert first_plan.verdict is not None and "before s3" in first_plan.verdict.feedback


async def test_the_recon_amendment_lists_what_recon_missed() -> None:
    problem = get_problem(RISKY)
    plan = json.loads(without_recovery(problem))
    recon = json.dumps(
        {"actions": ["reproduce_crash", "add_null_check", "add_regression_test", "deploy_fix"]}
    )
    script = by_step(RISKY, recon=[recon], plan=[json.dumps(plan)])
    seen: list[tuple[str, str]] = []

    def model(request: ModelRequest) -> str:
        answer = script(request)
        seen.append((script.calls[-1], request.messages[0].content))
        return answer

    result = await plan_search(problem, pipeline="search", model=ScriptedModel(model))
    assert result.succeeded
    second_recon = [text for step, text in seen if step == R][1]
    assert "**What to change**: List rollback_release: the plan needs it." in second_recon


# -- prevent: the request's schema allows only known actions --------------------------------


@pytest.mark.parametrize("pipeline", ["single", "search"])
async def test_the_plan_request_allows_only_known_actions(pipeline: str) -> None:
    problem = get_problem(RISKY)
    script = by_step(RISKY)
    requests: list[tuple[str, ModelRequest]] = []

    def model(request: ModelRequest) -> str:
        answer = script(request)
        requests.append((script.calls[-1], request))
        return answer

    await plan_search(problem, pipeline=pipeline, model=ScriptedModel(model))
    [plan_request] = [r for step, r in requests if step == P]
    assert plan_request.json_schema is not None
    variants = plan_request.json_schema["properties"]["steps"]["items"]["anyOf"]
    # Two enums: the plain actions, and the risky ones (only they may name on_failure).
    assert [sorted(v["properties"]["action"]["enum"]) for v in variants] == [
        sorted(a.name for a in problem.actions if not a.may_fail and a.name in allowed(pipeline)),
        ["deploy_fix"],
    ]
    assert "on_failure" not in variants[0]["properties"]
    assert "on_failure" in variants[1]["properties"]


def allowed(pipeline: str) -> list[str]:
    """The single pipeline may use every action; the search only those recon listed."""
    problem = get_problem(RISKY)
    if pipeline == "single":
        return list(problem.action_names)
    return json.loads(good_outputs(problem)[R])["actions"]


# -- structural repairs: a dead end's recovery step, retry budgets over R_max ----------------

RISKY_MAIN = ("reproduce_crash", "add_null_check", "add_regression_test", "deploy_fix")


async def test_a_dead_end_whose_recovery_is_a_later_main_step_is_linked_by_on_failure() -> None:
    # The plan did the recovery action as a main-line step after the risky one (the
    # strategy's order listed it): the fix is the on_failure link only, not a new step.
    plan = plan_of(*RISKY_MAIN, "rollback_release")
    verdict = await verdict_of(RISKY, plan)
    assert not verdict.passed and verdict.feedback.startswith("dead-end: if s4 (deploy_fix)")
    assert "set the on_failure of s4 (deploy_fix) to s5 (rollback_release)" in verdict.feedback
    assert verdict.patch == ({"op": "add", "path": "/steps/3/on_failure", "value": "s5"},)
    assert (await verdict_of(RISKY, apply_patch(plan, verdict.patch))).passed


async def test_a_dead_end_without_a_recovery_step_gets_one_added() -> None:
    plan = plan_of(*RISKY_MAIN)
    verdict = await verdict_of(RISKY, plan)
    assert verdict.patch is not None
    repaired = apply_patch(plan, verdict.patch)
    assert repaired["steps"][3]["on_failure"] == "s5"
    assert repaired["steps"][4]["action"] == "rollback_release"
    assert (await verdict_of(RISKY, repaired)).passed


async def test_a_recovery_step_doing_the_wrong_thing_gets_the_right_action() -> None:
    plan = plan_of(*RISKY_MAIN, "reproduce_crash", s4="s5")
    verdict = await verdict_of(RISKY, plan)
    assert "make the recovery step s5 (reproduce_crash) do rollback_release" in verdict.feedback
    assert verdict.patch is not None
    assert (await verdict_of(RISKY, apply_patch(plan, verdict.patch))).passed


async def test_retry_budgets_over_r_max_are_lowered() -> None:
    problem = get_problem(PLAIN)
    plan = json.loads(over_budget(problem))
    verdict = await verdict_of(PLAIN, plan)
    assert "exceeds R_max" in verdict.feedback and verdict.patch is not None
    assert {op["op"] for op in verdict.patch} == {"replace"}
    assert (await verdict_of(PLAIN, apply_patch(plan, verdict.patch))).passed


async def test_without_structural_repairs_the_fix_is_feedback_only() -> None:
    guard = plan_guard(get_problem(RISKY), structural_repairs=False)
    artifact = Artifact(id="p", step="plan", text=json.dumps(plan_of(*RISKY_MAIN)))
    verdict = await guard.check(artifact, Context(objective="plan"))
    assert verdict.feedback.startswith("dead-end") and verdict.patch is None


async def test_a_search_repairs_a_dead_end_and_the_budget_it_then_exceeds_in_one_call() -> None:
    # Budgets that fill R_max exactly: the added recovery step takes the total over it, and
    # the repaired plan's own fix (lower a budget) is applied in the same chain.
    problem = get_problem(RISKY)
    plan = plan_of(*RISKY_MAIN)
    plan["steps"][0]["retry_budget"] = 2
    plan["steps"][1]["retry_budget"] = 2
    script = by_step(RISKY, plan=[json.dumps(plan)])
    result = await plan_search(problem, pipeline="search", model=script.model())
    assert result.succeeded and script.calls == FULL
    applied = [e for e in result.trace.events if e.kind == "patch_applied"]
    assert [e.data["passed"] for e in applied] == [False, True]
    assert result.answer["steps"][3]["on_failure"] == "s5"
    assert sum(s["retry_budget"] for s in result.answer["steps"]) <= problem.r_max
    assert result.steering.repairs == 1


async def test_a_repair_naming_an_action_recon_did_not_list_is_not_kept() -> None:
    problem = get_problem(RISKY)
    recon = {"actions": list(RISKY_MAIN)}
    script = by_step(RISKY, recon=[json.dumps(recon)], plan=[json.dumps(plan_of(*RISKY_MAIN))])
    result = await plan_search(problem, pipeline="search", model=script.model())
    applied = [e for e in result.trace.events if e.kind == "patch_applied"]
    assert applied and applied[0].data["passed"] is False  # rollback_release is not recon's
    assert script.calls[:5] == [*FULL, R]  # so the fix goes back to recon, as before


# -- the search goes where the fix can be made (FixHeuristic, the search's default) ---------


async def test_a_dead_end_whose_recovery_recon_listed_retries_the_plan() -> None:
    problem = get_problem(RISKY)
    script = by_step(RISKY, plan=[without_recovery(problem)])
    result = await plan_search(
        problem, pipeline="search", model=script.model(), structural_repairs=False
    )
    assert result.succeeded and script.calls == [*FULL, P]
    assert backtracks(result) == []


async def test_a_fix_naming_an_action_recon_missed_goes_back_to_recon() -> None:
    problem = get_problem(RISKY)
    recon = {"actions": ["reproduce_crash", "add_null_check", "add_regression_test", "deploy_fix"]}
    script = by_step(RISKY, recon=[json.dumps(recon)], plan=[without_recovery(problem)])
    result = await plan_search(problem, pipeline="search", model=script.model())
    assert result.succeeded and script.calls == [*FULL, R, S, P]
    [back] = backtracks(result)
    assert (back["to"], back["depth"]) == (R, 2)
    assert back["rule"] == "fix needs rollback_release, which recon did not list -> recon"


async def test_a_step_the_strategy_has_and_the_plan_left_out_retries_the_plan() -> None:
    # The strategy's order runs and reaches the goal; the plan dropped its first step.
    problem = get_problem(PLAIN)
    script = by_step(plan=[unsatisfiable(problem), over_budget(problem)])
    result = await plan_search(
        problem, pipeline="search", model=script.model(), structural_repairs=False
    )
    assert result.succeeded and script.calls == [*FULL, P, P]
    assert backtracks(result) == []
    rules = [e.data["rule"] for e in result.trace.events if e.kind == "note"]
    assert rules[0] == "the strategy's order runs; the plan left it -> retry the plan"


def test_a_missing_step_goes_back_to_the_strategy_when_its_order_does_not_run() -> None:
    problem = get_problem(PLAIN)
    heuristic = FixHeuristic(problem)
    good = json.loads(good_outputs(problem)[S])
    short = {**good, "order": good["order"][1:]}  # its first action gives what the next needs
    verdict = GuardResult.fail(
        "preconditions {cause_found} of step s1 (convert_to_utc) not satisfiable", "plan"
    )

    def failure(strategy: dict[str, Any]) -> Failure:
        ctx = Context(objective="o").amend(artifact=(R, good_outputs(problem)[R]))
        ctx = ctx.amend(artifact=(S, json.dumps(strategy)))
        return Failure(
            step=P, level=3, verdict=verdict, retry_count=1, steps=tuple(FULL), context=ctx
        )

    assert heuristic.decide_rule(failure(short)) == (
        1,
        "a step missing or out of place -> strategy",
    )
    assert heuristic.decide_rule(failure(good))[0] == 0


async def test_the_same_plan_feedback_twice_goes_to_the_strategy_not_above() -> None:
    problem = get_problem(PLAIN)
    # Two different plans, the same feedback (the first step's effects misstated).
    script = by_step(plan=[misstated(problem, 1), misstated(problem, 2)])
    result = await plan_search(problem, pipeline="search", model=script.model())
    assert result.succeeded and script.calls == [*FULL, P, S, P]
    [back] = backtracks(result)
    assert (back["to"], back["depth"], back["rule"]) == (S, 1, "same feedback 2x -> strategy")


def test_retry_budgets_the_guards_reject_cannot_be_written() -> None:
    from guardsearch.apps.plan.plan_format import generation_schema

    problem = get_problem(PLAIN)  # R_max 5
    for variant in generation_schema(problem)["properties"]["steps"]["items"].get("anyOf", []) or [
        generation_schema(problem)["properties"]["steps"]["items"]
    ]:
        budget = variant["properties"]["retry_budget"]
        assert (budget["minimum"], budget["maximum"]) == (1, problem.r_max)


# -- recon and the strategy: judged by what the plan needs, repaired by their guards -----


async def test_the_search_repairs_recon_and_the_strategy_without_model_calls() -> None:
    from guardsearch.apps.plan.report import result_dict

    problem = get_problem(PLAIN)
    # Recon misses convert_to_utc (code_fixed is out of reach); the strategy lists its
    # order backwards. Their guards add the action and reorder: no call is spent on it.
    recon = {"actions": ["find_timezone_bug", "rerun_report"]}
    strategy = {
        "approach": "fix in UTC",
        "rationale": "each step gives what the next one needs",
        "order": ["rerun_report", "convert_to_utc", "find_timezone_bug"],
    }
    script = by_step(PLAIN, recon=[json.dumps(recon)], strategy=[json.dumps(strategy)])
    model = script.model()
    result = await plan_search(problem, pipeline="search", model=model)
    assert result.succeeded and script.calls == FULL
    repaired = [e for e in result.trace.events if e.kind == "patch_applied"]
    assert [(e.step, e.data["passed"]) for e in repaired] == [("recon", True), ("strategy", True)]
    values = {n.step: n.value for n in result.path[1:]}
    assert values[R]["actions"] == ["find_timezone_bug", "rerun_report", "convert_to_utc"]
    assert values[S]["order"] == ["find_timezone_bug", "convert_to_utc", "rerun_report"]
    # The plan request allows only the actions of the repaired recon.
    plan_request = model.requests[3]
    assert plan_request.json_schema is not None
    assert sorted(schema_actions(plan_request.json_schema)) == sorted(values[R]["actions"])
    steering = result_dict(result)["steering"]
    assert steering == {
        "outputs": 4,
        "repeats": 0,
        "repeat_share": 0.0,
        "repairs": 2,
        "prevented": 0,  # a scripted model enforces no schema
    }


async def test_plan_attempts_follow_the_engines_schedule() -> None:
    problem = get_problem(PLAIN)
    script = by_step(plan=[misstated(problem, 1), misstated(problem, 2)])
    model = script.model()
    result = await plan_search(problem, pipeline="search", model=model, temperature=0.0)
    assert result.succeeded
    # The plan retries once with the fix, then the same feedback sends the search back
    # to the strategy, whose new node's plan goes on with the plan level's schedule.
    assert script.calls == [*FULL, P, S, P]
    sampled = [(step_of(r), r.temperature, r.seed) for r in model.requests[3:]]
    # The default Schedule: greedy first, then warmer with a fresh seed; counted over a
    # pipeline level, so the plan under the new strategy is attempt 3, not greedy again.
    assert sampled == [(P, 0.0, 0), (P, 0.7, 1), (S, 0.7, 1), (P, 1.0, 2)]


async def test_a_plan_under_a_new_strategy_sees_the_plans_rejected_under_the_old_one() -> None:
    # On the committed run (plan_steer_run) the search sent feat-dark-mode's plan back to
    # the strategy and the new plan node, greedy and knowing nothing of the old plan's
    # fix, wrote the same dead end under each of three strategies.
    problem = get_problem(PLAIN)
    script = by_step(plan=[misstated(problem, 1), misstated(problem, 2)])
    model = script.model()
    await plan_search(problem, pipeline="search", model=model)
    assert script.calls == [*FULL, P, S, P]
    last = model.requests[-1].messages[0].content
    assert "## Already answered at this step (give a different answer)" in last
    feedback = "declared pre/effects differ from the action's"
    assert last.count(feedback) == 2  # both plans of the first strategy, with the fix
    assert model.requests[-1].temperature == 1.0
