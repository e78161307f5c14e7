"""Two plan repairs from the committed traces (plan_steer3_run): drop a step that can never
run (feat-product-search kept buy_search_service, which needs budget_approved that no
action gives), and put back the steps of the strategy's order the plan left out
(mig-email-verified-column's plans left out backfill_column). Each shown firing, and
where it must not."""

from __future__ import annotations

import json
from typing import Any

import pytest
from plan_helpers import (
    A,
    P,
    R,
    S,
    by_step,
    good_outputs,
    good_plan,
    left_out,
    plan_of,
    unsatisfiable,
)

from guardsearch import Artifact, Context
from guardsearch.apps.plan import Plan, get_problem, plan_guard, plan_search, problems
from guardsearch.apps.plan.follow import follow_patch, strategy_order
from guardsearch.apps.plan.repair import drop_patch
from guardsearch.guards.diff import apply_patch

FULL = [A, R, S, P]
PRODUCT = "feat-product-search"
EMAIL = "mig-email-verified-column"
EMAIL_ORDER = ["backup_db", "add_nullable_column", "backfill_column", "set_not_null"]


def context_with(recon: list[str] | None = None, order: list[str] | None = None) -> Context:
    ctx = Context(objective="plan")
    if recon is not None:
        ctx = ctx.amend(artifact=(R, json.dumps({"actions": recon})))
    if order is not None:
        strategy = {"approach": "follow", "rationale": "each step gives the next", "order": order}
        ctx = ctx.amend(artifact=(S, json.dumps(strategy)))
    return ctx


async def verdict(problem_id: str, plan: dict[str, Any], context: Context | None = None):  # type: ignore[no-untyped-def]
    guard = plan_guard(get_problem(problem_id))
    artifact = Artifact(id="p", step="plan", text=json.dumps(plan))
    return await guard.check(artifact, context or Context(objective="plan"))


def applied(result) -> list[tuple[list[str], bool]]:  # type: ignore[no-untyped-def]
    return [
        ([op["op"] for op in e.data["patch"]], e.data["passed"])
        for e in result.trace.events
        if e.kind == "patch_applied" and e.step == P
    ]


# -- drop: a step whose need no action of the problem can give ---------------------------


async def test_a_step_that_can_never_run_is_dropped() -> None:
    plan = plan_of("buy_search_service", "add_search_index", "build_search_box", "release_search")
    found = await verdict(PRODUCT, plan)
    assert "no action of the problem can give budget_approved: drop s1" in found.feedback
    assert found.patch == ({"op": "remove", "path": "/steps/0"},)
    assert (await verdict(PRODUCT, apply_patch(plan, found.patch))).passed


async def test_the_single_pass_drops_it_and_lowers_the_budget_in_its_one_call() -> None:
    # The committed single trial's plan: the step, then budgets over R_max (4).
    plan = plan_of("buy_search_service", "add_search_index", "build_search_box", "release_search")
    for step in plan["steps"][2:]:
        step["retry_budget"] = 2
    problem = get_problem(PRODUCT)
    script = by_step(PRODUCT, plan=[json.dumps(plan)])
    result = await plan_search(problem, pipeline="single", model=script.model())
    assert result.succeeded and script.calls == [P]
    # Without s1 the total is 5: one budget lowered to fit R_max 4.
    assert applied(result) == [(["remove"], False), (["replace"], True)]
    steps = result.answer["steps"]
    assert [s["action"] for s in steps] == [
        "add_search_index",
        "build_search_box",
        "release_search",
    ]
    assert sum(s["retry_budget"] for s in steps) == problem.r_max


async def test_a_step_whose_need_some_action_gives_is_not_dropped() -> None:
    # build_search_box needs index_ready, which add_search_index could give: the fix is to
    # add that step (the model's choice, or the strategy's), never to drop this one.
    found = await verdict(PRODUCT, plan_of("build_search_box", "release_search"))
    assert not found.passed and "drop" not in found.feedback
    assert found.patch is None


async def test_a_drop_that_leaves_a_plan_failing_is_not_kept() -> None:
    # Dropping buy_search_service leaves build_search_box without index_ready, and the
    # single pass has no strategy to take add_search_index from: the model writes again.
    bad = plan_of("buy_search_service", "build_search_box", "release_search")
    problem = get_problem(PRODUCT)
    script = by_step(PRODUCT, plan=[json.dumps(bad)])
    result = await plan_search(problem, pipeline="single", model=script.model())
    assert result.succeeded and script.calls == [P, P]
    assert applied(result) == [(["remove"], False)]


def test_a_step_naming_a_recovery_step_is_not_dropped() -> None:
    # Removing it would turn its recovery step into a main-line step.
    plan = Plan.model_validate(plan_of("backfill_column", "restore_backup", s1="s2"))
    assert drop_patch(plan, "s1") is None
    assert drop_patch(plan, "s2") is None  # a recovery step
    assert drop_patch(plan, "s9") is None  # no such step


# -- follow the strategy: put back the steps of its order the plan left out -------------


async def test_the_step_the_plan_left_out_is_put_back_from_the_strategy() -> None:
    plan = plan_of("backup_db", "add_nullable_column", "set_not_null")
    ctx = context_with([*EMAIL_ORDER, "restore_backup"], EMAIL_ORDER)
    found = await verdict(EMAIL, plan, ctx)
    assert "add a step backfill_column" in found.feedback
    value = {
        "id": "s4",
        "action": "backfill_column",
        "pre": ["column_nullable"],
        "effects": ["column_backfilled"],
        "retry_budget": 1,
    }
    assert found.patch == ({"op": "add", "path": "/steps/2", "value": value},)
    # The risky step put back is a dead end until it has its recovery step: the next fix.
    again = await verdict(EMAIL, apply_patch(plan, found.patch), ctx)
    assert again.feedback.startswith("dead-end: if s4 (backfill_column) fails")
    assert again.patch is not None
    assert (
        await verdict(EMAIL, apply_patch(apply_patch(plan, found.patch), again.patch), ctx)
    ).passed


async def test_the_search_puts_the_left_out_step_back_without_a_model_call() -> None:
    # The committed trace: every plan under two strategies left out backfill_column.
    problem = get_problem(EMAIL)
    plan = plan_of("backup_db", "add_nullable_column", "set_not_null")
    recon = {"actions": [*EMAIL_ORDER, "restore_backup"]}
    strategy = {"approach": "nullable first", "rationale": "backfill before the constraint",
                "order": EMAIL_ORDER}  # fmt: skip
    script = by_step(
        EMAIL, recon=[json.dumps(recon)], strategy=[json.dumps(strategy)], plan=[json.dumps(plan)]
    )
    result = await plan_search(problem, pipeline="search", model=script.model())
    assert result.succeeded and script.calls == FULL
    assert applied(result) == [(["add"], False), (["add", "add"], True)]
    steps = result.answer["steps"]
    assert [s["action"] for s in steps] == [*EMAIL_ORDER, "restore_backup"]
    assert steps[2]["on_failure"] == steps[4]["id"]
    assert result.steering.repairs == 1


async def test_the_single_pass_has_no_strategy_to_follow() -> None:
    problem = get_problem(EMAIL)
    plan = plan_of("backup_db", "add_nullable_column", "set_not_null")
    found = await verdict(EMAIL, plan)
    assert "add a step backfill_column" in found.feedback and found.patch is None
    script = by_step(EMAIL, plan=[json.dumps(plan)])
    result = await plan_search(problem, pipeline="single", model=script.model())
    assert script.calls == [P, P] and applied(result) == []


async def test_a_goal_step_left_out_goes_after_the_main_line() -> None:
    plan = plan_of("backup_db", "add_nullable_column", "backfill_column", "restore_backup", s3="s4")
    ctx = context_with([*EMAIL_ORDER, "restore_backup"], EMAIL_ORDER)
    found = await verdict(EMAIL, plan, ctx)
    assert "goal tokens {column_added} unreachable" in found.feedback
    assert found.patch is not None
    repaired = apply_patch(plan, found.patch)
    assert [s["action"] for s in repaired["steps"]] == [*EMAIL_ORDER, "restore_backup"]
    assert (await verdict(EMAIL, repaired, ctx)).passed


async def test_a_strategy_whose_order_does_not_run_is_not_followed() -> None:
    plan = plan_of("backup_db", "add_nullable_column", "set_not_null")
    short = ["backup_db", "add_nullable_column", "set_not_null"]  # lacks backfill_column
    ctx = context_with([*EMAIL_ORDER, "restore_backup"], short)
    assert strategy_order(get_problem(EMAIL), ctx) is None
    assert (await verdict(EMAIL, plan, ctx)).patch is None


async def test_without_structural_repairs_the_strategy_is_not_followed() -> None:
    guard = plan_guard(get_problem(EMAIL), structural_repairs=False)
    artifact = Artifact(
        id="p",
        step="plan",
        text=json.dumps(plan_of("backup_db", "add_nullable_column", "set_not_null")),
    )
    found = await guard.check(artifact, context_with([*EMAIL_ORDER, "restore_backup"], EMAIL_ORDER))
    assert not found.passed and found.patch is None


def test_a_step_out_of_place_is_left_to_the_reorder_repair_not_followed() -> None:
    # unsatisfiable: a need some later main-line step gives; follow inserts only what no
    # main-line step gives (a second copy would be a different plan).
    problem = get_problem("bug-report-timezone")
    order = json.loads(good_outputs(problem)[S])["order"]
    plan = Plan.model_validate(json.loads(unsatisfiable(problem)))
    assert follow_patch(problem, plan, order) is None
    missing = Plan.model_validate(json.loads(left_out(problem)))
    patch = follow_patch(problem, missing, order)
    assert patch is not None and [op["value"]["action"] for op in patch] == ["find_timezone_bug"]
    assert follow_patch(problem, missing, None) is None


@pytest.mark.parametrize("problem", problems(), ids=lambda p: p.id)
async def test_a_right_plan_is_never_repaired(problem) -> None:  # type: ignore[no-untyped-def]
    # Every problem's reference plan, judged with its own main line as the strategy: it
    # passes, so no repair (drop, follow or any other) is attached.
    plan = good_plan(problem)
    main = [s["action"] for s in plan["steps"] if s["id"] not in {
        t.get("on_failure") for t in plan["steps"]
    }]  # fmt: skip
    ctx = context_with([s["action"] for s in plan["steps"]], main)
    found = await verdict(problem.id, plan, ctx)
    assert found.passed and found.patch is None
