"""The plan guards at three levels on hand-made good and bad plans, and what their
feedback tells the search's rule table."""

from __future__ import annotations

import json
from typing import Any

import pytest
from plan_helpers import (
    PLAIN,
    RISKY,
    good_plan,
    over_budget,
    unreachable,
    unsatisfiable,
    without_recovery,
)

from guardsearch import Artifact, Context, GuardResult
from guardsearch.apps.plan import (
    ExpansivePlanGuard,
    MediumPlanGuard,
    MinimalPlanGuard,
    get_problem,
    plan_guard,
)
from guardsearch.core.errors import ConfigError
from guardsearch.search import Failure, RuleHeuristic

CTX = Context(objective="plan")


async def judge(guard: MinimalPlanGuard, plan: Any) -> GuardResult:
    text = plan if isinstance(plan, str) else json.dumps(plan)
    return await guard.check(Artifact(id="p", step="plan", text=text), CTX)


def depth_of(verdict: GuardResult) -> int:
    """What the search's rule table does with this verdict at the plan level (level 3)."""
    failure = Failure(step="plan", level=3, verdict=verdict, retry_count=1)
    return RuleHeuristic()(failure)


@pytest.fixture
def risky() -> Any:
    return get_problem(RISKY)


@pytest.fixture
def plain() -> Any:
    return get_problem(PLAIN)


# -- good plans pass every level -------------------------------------------------------


@pytest.mark.parametrize("level", ["minimal", "medium", "expansive"])
async def test_the_reference_plan_passes_every_level(risky: Any, level: str) -> None:
    verdict = await judge(plan_guard(risky, level), good_plan(risky))
    assert verdict.passed, verdict.feedback
    assert verdict.score == 1.0


# -- Minimal --------------------------------------------------------------------------


async def test_minimal_rejects_text_that_is_not_json(plain: Any) -> None:
    verdict = await judge(MinimalPlanGuard(plain), "first reproduce the bug, then fix it")
    assert not verdict.passed
    assert "not parseable as JSON" in verdict.feedback
    assert depth_of(verdict) == 0


async def test_minimal_names_a_missing_required_field(plain: Any) -> None:
    plan = good_plan(plain)
    del plan["steps"][1]["action"]
    verdict = await judge(MinimalPlanGuard(plain), plan)
    assert "missing required field" in verdict.feedback and "'action'" in verdict.feedback
    assert depth_of(verdict) == 0


async def test_minimal_rejects_a_step_without_retries(plain: Any) -> None:
    plan = good_plan(plain)
    plan["steps"][2]["retry_budget"] = 0
    verdict = await judge(MinimalPlanGuard(plain), plan)
    assert verdict.feedback == "step s3: retry_budget <= 0 (each step needs >= 1 attempt)"
    assert depth_of(verdict) == 0


async def test_minimal_rejects_unknown_actions_duplicate_ids_and_backward_branches(
    plain: Any,
) -> None:
    plan = good_plan(plain)
    plan["steps"][0]["action"] = "panic"
    plan["steps"][2]["id"] = "s2"
    plan["steps"][1]["on_failure"] = "s1"
    verdict = await judge(MinimalPlanGuard(plain), plan)
    assert "action 'panic' is not one of the problem's actions" in verdict.feedback
    assert "step id s2 is used more than once" in verdict.feedback
    assert "on_failure must name a later step, not s1" in verdict.feedback


async def test_minimal_rejects_a_branch_to_no_step(plain: Any) -> None:
    plan = good_plan(plain)
    plan["steps"][0]["on_failure"] = "s7"
    verdict = await judge(MinimalPlanGuard(plain), plan)
    assert verdict.feedback == "step s1: on_failure names no step 's7'"


async def test_minimal_does_not_judge_meaning(plain: Any) -> None:
    # Out of order, but well formed: Minimal passes it, Medium does not.
    assert (await judge(MinimalPlanGuard(plain), unsatisfiable(plain))).passed
    assert not (await judge(MediumPlanGuard(plain), unsatisfiable(plain))).passed


# -- Medium ---------------------------------------------------------------------------


async def test_medium_reports_unsatisfiable_preconditions(plain: Any) -> None:
    verdict = await judge(MediumPlanGuard(plain), unsatisfiable(plain))
    assert not verdict.passed
    assert (
        "preconditions {cause_found} of step s2 (convert_to_utc) not satisfiable "
        "from the initial state or earlier effects"
    ) in verdict.feedback
    assert depth_of(verdict) == 1


async def test_medium_reports_an_unreachable_goal(plain: Any) -> None:
    verdict = await judge(MediumPlanGuard(plain), unreachable(plain))
    assert verdict.feedback == (
        "goal tokens {report_fixed} unreachable: no main-line step gives them. "
        "Fix: end with a step rerun_report (needs code_fixed), which gives report_fixed"
    )
    assert depth_of(verdict) == 1


async def test_medium_reports_a_total_retry_budget_over_r_max(plain: Any) -> None:
    verdict = await judge(MediumPlanGuard(plain), over_budget(plain))
    assert verdict.feedback == (
        "total_retry_budget 15 exceeds R_max 5. Fix: lower retry_budget of s1 "
        "(find_timezone_bug) to 1, s2 (convert_to_utc) to 1, s3 (rerun_report) to 3 (total 5)"
    )
    assert depth_of(verdict) == 1


async def test_medium_rejects_steps_that_misstate_their_action(plain: Any) -> None:
    plan = good_plan(plain)
    plan["steps"][0]["effects"] = ["report_fixed"]  # claiming the goal early
    verdict = await judge(MediumPlanGuard(plain), plan)
    assert verdict.feedback == (
        "step s1 (find_timezone_bug): declared pre/effects differ from the action's "
        "(pre {wrong_dates_reported}, effects {cause_found})"
    )
    assert depth_of(verdict) == 0  # a local slip: retry the plan


async def test_medium_passes_a_plan_with_a_dead_end(risky: Any) -> None:
    # Medium reads only the main line; the missing failure branch is Expansive's job.
    assert (await judge(MediumPlanGuard(risky), without_recovery(risky))).passed


async def test_a_failing_level_scores_by_how_far_the_plan_got(plain: Any) -> None:
    minimal = await judge(MediumPlanGuard(plain), "not json")
    medium = await judge(MediumPlanGuard(plain), unreachable(plain))
    assert minimal.score is not None and medium.score is not None
    assert minimal.score < medium.score < 1.0
    assert [c.name for c in medium.checks] == ["minimal", "medium"]
    assert [c.passed for c in medium.checks] == [True, False]


# -- Expansive ------------------------------------------------------------------------


async def test_expansive_reports_a_dead_end_when_a_risky_step_has_no_branch(risky: Any) -> None:
    verdict = await judge(ExpansivePlanGuard(risky), without_recovery(risky))
    assert not verdict.passed
    assert verdict.feedback == (
        "dead-end: if s4 (deploy_fix) fails, no path reaches the goal or the safe facts "
        "(lost {service_up}, no recovery step). Fix: add a recovery step rollback_release "
        "after the main steps and set the on_failure of s4 (deploy_fix) to its id"
    )
    assert depth_of(verdict) == 2


async def test_expansive_reports_a_recovery_step_that_cannot_run(risky: Any) -> None:
    plan = good_plan(risky)
    recovery = plan["steps"][-1]
    recovery.update(action="rewrite_auth_module", pre=["design_approved"], effects=["code_fixed"])
    verdict = await judge(ExpansivePlanGuard(risky), plan)
    assert verdict.feedback == (
        "dead-end: if s4 (deploy_fix) fails, no path reaches the goal or the safe facts "
        "(recovery step s5 (rewrite_auth_module) cannot run: {design_approved} missing). "
        "Fix: make the recovery step s5 (rewrite_auth_module) do rollback_release instead"
    )
    assert depth_of(verdict) == 2


async def test_expansive_reports_a_recovery_step_that_recovers_nothing(risky: Any) -> None:
    plan = good_plan(risky)
    recovery = plan["steps"][-1]
    recovery.update(action="add_null_check", pre=["crash_reproduced"], effects=["code_fixed"])
    verdict = await judge(ExpansivePlanGuard(risky), plan)
    assert "dead-end: if s4 (deploy_fix) fails" in verdict.feedback
    assert "recovery step s5 (add_null_check) ends with {service_up} still lost" in (
        verdict.feedback
    )


async def test_expansive_gives_up_past_max_explorations(risky: Any) -> None:
    verdict = await judge(ExpansivePlanGuard(risky, max_explorations=3), good_plan(risky))
    assert verdict.feedback.startswith("MAX_EXPLORATIONS exceeded: more than 3 step executions")
    assert depth_of(verdict) == 1


async def test_expansive_passes_risky_steps_whose_failure_loses_nothing_safe() -> None:
    problem = get_problem("mig-files-to-s3")
    assert (await judge(ExpansivePlanGuard(problem), good_plan(problem))).passed


def test_an_unknown_guard_level_is_a_config_error(plain: Any) -> None:
    with pytest.raises(ConfigError, match="unknown guard level 'strict'"):
        plan_guard(plain, "strict")
    with pytest.raises(ConfigError, match="max_explorations must be >= 1"):
        ExpansivePlanGuard(plain, max_explorations=0)
