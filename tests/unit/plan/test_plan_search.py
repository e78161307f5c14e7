"""The plan pipeline searched with feedback-guided DFS, on scripted models.

Every rule-table row is driven by the plan guards' own feedback strings; the
terminations, the context amendment on backtrack and the pipelines' differences are
checked through the same pipeline.
"""

from __future__ import annotations

import json

import pytest
from plan_helpers import (
    RISKY,
    A,
    P,
    R,
    S,
    by_step,
    good_outputs,
    good_plan,
    misstated,
    over_budget,
    recon_without_recovery,
    step_of,
    unreachable,
    unsatisfiable,
    without_recovery,
)

from guardsearch import Budget, ModelRequest, ScriptedModel, max_calls
from guardsearch.apps.plan import get_problem, plan_search
from guardsearch.apps.plan.plan_format import schema_actions
from guardsearch.apps.plan.report import backtracks
from guardsearch.guards.constraints import constraint_names
from guardsearch.search import Failure, RuleHeuristic
from guardsearch.search.heuristic import GIVE_UP

FULL = [A, R, S, P]


async def run(script, pipeline: str = "search", **options):  # type: ignore[no-untyped-def]
    """The pipeline with the dfs rule table (the search pipeline's default heuristic,
    `fixes`, is tested in test_plan_steer.py)."""
    if pipeline == "search":
        options.setdefault("heuristic", "rules")
    return await plan_search(script.problem, pipeline=pipeline, model=script.model(), **options)


# -- the rule table, row by row, with the plan guards' real feedback ------------------


async def test_row_not_parseable_retries_the_plan() -> None:
    script = by_step(plan=["Step 1: look at the bug"])
    result = await run(script)
    assert result.succeeded
    assert script.calls == [*FULL, P]


async def test_row_missing_required_field_retries_the_plan() -> None:
    plan = good_plan(get_problem("bug-report-timezone"))
    del plan["steps"][0]["retry_budget"]
    script = by_step(plan=[json.dumps(plan)])
    result = await run(script)
    assert result.succeeded and script.calls == [*FULL, P]


async def test_row_retry_budget_not_positive_retries_the_plan() -> None:
    plan = good_plan(get_problem("bug-report-timezone"))
    plan["steps"][1]["retry_budget"] = 0
    script = by_step(plan=[json.dumps(plan)])
    result = await run(script)
    assert result.succeeded and script.calls == [*FULL, P]


@pytest.mark.parametrize("bad", [unsatisfiable, unreachable, over_budget])
async def test_rows_medium_failures_backtrack_to_the_strategy(bad) -> None:  # type: ignore[no-untyped-def]
    problem = get_problem("bug-report-timezone")
    script = by_step(plan=[bad(problem)])
    # Without the structural repairs, which would lower an over-budget plan's budgets.
    result = await run(script, structural_repairs=False)
    assert result.succeeded
    assert script.calls == [*FULL, S, P]
    [back] = backtracks(result)
    assert (back["from"], back["to"], back["depth"], back["reason"]) == (P, S, 1, "heuristic")


async def test_row_max_explorations_backtracks_to_the_strategy() -> None:
    script = by_step(RISKY)
    # Three step executions are too few to walk the risky plan's failure branch.
    result = await run(script, max_explorations=3)
    assert not result.succeeded  # every plan is too complex for this bound...
    assert script.calls[:6] == [*FULL, S, P]  # ...and each one sends the search to strategy
    first = backtracks(result)[0]
    assert (first["from"], first["to"], first["depth"]) == (P, S, 1)
    assert first["feedback"].startswith("MAX_EXPLORATIONS exceeded: more than 3 step")


async def test_row_dead_end_backtracks_to_recon() -> None:
    problem = get_problem(RISKY)
    # recon left out rollback_release: the guard cannot add the recovery step itself.
    script = by_step(
        RISKY, recon=[recon_without_recovery(problem)], plan=[without_recovery(problem)]
    )
    result = await run(script)
    assert result.succeeded
    assert script.calls == [*FULL, R, S, P]
    [back] = backtracks(result)
    assert (back["from"], back["to"], back["depth"]) == (P, R, 2)
    assert back["feedback"].startswith("dead-end: if s4 (deploy_fix) fails")


async def test_row_repeated_identical_failures_backtrack_to_the_analysis() -> None:
    problem = get_problem("bug-report-timezone")
    # Three different plans, each misstating a step (retried in place, depth 0): the
    # same feedback three times.
    script = by_step(plan=[misstated(problem, take) for take in (1, 2, 3)])
    heuristic = RuleHeuristic(escalate_after=3)  # the same feedback across rmax (3) retries
    result = await run(script, heuristic=heuristic)
    assert result.succeeded
    assert script.calls == [*FULL, P, P, *FULL]
    assert [(b["from"], b["to"], b["depth"]) for b in backtracks(result)] == [(P, A, 3)]


async def test_repeated_feedback_escalates_by_the_retry_count_by_default() -> None:
    problem = get_problem("bug-report-timezone")
    script = by_step(plan=[misstated(problem, 1), misstated(problem, 2)])
    result = await run(script)
    # The second identical failure is retry 2: min(2, 3) = 2 levels up, to recon.
    assert script.calls == [*FULL, P, R, S, P]
    assert result.succeeded


async def test_the_model_heuristic_classifies_unmatched_feedback_and_spends_a_call() -> None:
    problem = get_problem("bug-report-timezone")
    plan = good_plan(problem)
    plan["steps"][0]["effects"] = ["report_fixed"]  # no rule matches this feedback
    script = by_step(plan=[json.dumps(plan)])
    script.cause = "strategy"
    result = await run(script, heuristic="model", budget=Budget(max_calls(20)))
    assert result.succeeded
    assert script.calls == [*FULL, "classify", S, P]
    assert result.calls == 7  # the classifier's call is booked like any other


async def test_the_model_heuristic_leaves_matched_feedback_to_the_rules() -> None:
    script = by_step(plan=["not json"])
    result = await run(script, heuristic="model")
    assert result.succeeded and script.calls == [*FULL, P]


# -- search-blind and the linear pipelines ----------------------------------------------


async def test_blind_search_goes_up_one_level_even_for_a_formatting_error() -> None:
    script = by_step(plan=["not json at all"])
    result = await run(script, "search-blind")
    assert result.succeeded
    assert script.calls == [*FULL, S, P]  # the rule table would have retried the plan


async def test_blind_search_goes_up_only_one_level_for_a_dead_end() -> None:
    problem = get_problem(RISKY)
    script = by_step(RISKY, plan=[without_recovery(problem)])
    result = await run(script, "search-blind", structural_repairs=False)
    assert script.calls == [*FULL, S, P]
    assert result.succeeded


async def test_the_full_pipeline_never_goes_back() -> None:
    problem = get_problem("bug-report-timezone")
    script = by_step(plan=[unsatisfiable(problem)] * 3)
    result = await run(script, "full")
    assert not result.succeeded
    # The plan's rmax, then nothing above may go back: every level's options are spent.
    assert result.termination == "all_pruned"
    assert script.calls == [*FULL, P, P]
    assert backtracks(result) == []


async def test_single_runs_only_the_plan_step() -> None:
    script = by_step(plan=["oops"])
    result = await run(script, "single")
    assert result.succeeded and script.calls == [P, P]
    assert [n.step for n in result.path[1:]] == [P]


async def test_classify_then_plan_runs_analysis_then_plan() -> None:
    script = by_step()
    result = await run(script, "classify-then-plan")
    assert result.succeeded and script.calls == [A, P]


# -- terminations -------------------------------------------------------------------


async def test_termination_success_returns_the_plan() -> None:
    script = by_step()
    result = await run(script)
    assert result.termination == "success"
    assert result.answer == good_plan(script.problem)
    assert result.calls == 4


async def test_termination_budget_exhausted() -> None:
    problem = get_problem("bug-report-timezone")
    script = by_step(plan=[unsatisfiable(problem)] * 10)
    result = await run(script, budget=Budget(max_calls(5)))
    assert result.termination == "budget_exhausted"
    assert result.calls == 5 and not result.succeeded


async def test_termination_backtrack_ceiling() -> None:
    problem = get_problem("bug-report-timezone")
    script = by_step(plan=[unsatisfiable(problem)] * 100)
    result = await run(script)
    assert result.termination == "backtrack_ceiling"
    # strategy may be visited 1 + 3 times; each new strategy gets one plan attempt.
    assert script.calls.count(S) == 4
    assert script.calls.count(P) == 4
    # The analysis ran out of visits while the plan level had 4 of its 8 left.
    end = result.trace.of_kind("backtrack")[-1].data
    assert end["to"] is None and end["alternatives"] is True


async def test_termination_all_pruned_when_no_analysis_passes() -> None:
    bad = [
        json.dumps({"problem_class": "bug_fix", "key_facts": [f"no_such_fact_{i}"]}) for i in (1, 2)
    ]
    script = by_step(analysis=bad)
    result = await run(script)
    # rmax 2 at the first level, both failed: nothing is left to try anywhere.
    assert script.calls == [A, A]
    assert result.termination == "all_pruned"


async def test_termination_all_pruned_when_the_classify_pipeline_runs_out() -> None:
    problem = get_problem("bug-report-timezone")
    script = by_step(plan=[unsatisfiable(problem)] * 3)
    result = await run(script, "classify-then-plan")
    assert script.calls == [A, P, P, P]
    assert result.termination == "all_pruned"


async def test_termination_all_pruned_when_the_heuristic_gives_up() -> None:
    def give_up_on_dead_ends(failure: Failure) -> int:
        return GIVE_UP if "dead-end" in failure.feedback else RuleHeuristic()(failure)

    problem = get_problem(RISKY)
    script = by_step(RISKY, plan=[without_recovery(problem)])
    result = await run(script, heuristic=give_up_on_dead_ends, structural_repairs=False)
    assert result.termination == "all_pruned"
    assert script.calls == FULL


# -- repeated outputs are not guard feedback ------------------------------------------


async def test_a_plan_that_repeats_a_rejected_plan_is_retried_not_escalated() -> None:
    problem = get_problem("bug-report-timezone")
    script = by_step(plan=[misstated(problem)] * 2)  # the second is a duplicate
    model = script.model()
    result = await plan_search(problem, pipeline="search", model=model)
    assert result.succeeded
    assert script.calls == [*FULL, P, P]  # not up to recon (depth 2) as a repetition
    assert backtracks(result) == []
    seeds = [r.seed for r in model.requests[3:]]
    assert len(set(seeds)) == 3  # every regeneration of the plan had its own seed
    assert "no new candidates" not in model.requests[-1].messages[0].content


async def test_an_upstream_step_that_repeats_itself_stays_within_its_retries() -> None:
    problem = get_problem("bug-report-timezone")
    first = good_outputs(problem)[S]
    # The plan fails (back to the strategy); the strategy then repeats itself twice.
    script = by_step(strategy=[first, first, first], plan=[unsatisfiable(problem)])
    model = script.model()
    result = await plan_search(problem, pipeline="search", model=model, heuristic="rules")
    assert result.succeeded
    # strategy's rmax (2) spent on repeats, then one level up to recon, not to analysis.
    assert script.calls == [*FULL, S, S, R, S, P]
    assert [(b["from"], b["to"], b["reason"]) for b in backtracks(result)] == [
        (P, S, "heuristic"),
        (S, R, "ceiling"),
    ]
    second_try = [r for r in model.requests if step_of(r) == S][2]
    assert "Your previous output for this step was rejected" not in second_try.messages[0].content


async def test_backtracks_record_the_rule_row_that_decided_them() -> None:
    problem = get_problem(RISKY)
    script = by_step(RISKY, plan=[without_recovery(problem), unsatisfiable(problem)])
    result = await run(script, structural_repairs=False)
    assert result.succeeded
    assert [(b["depth"], b["reason"], b["rule"]) for b in backtracks(result)] == [
        (2, "heuristic", "dead-end + no path -> fundamental structural problem"),
        (1, "heuristic", "not satisfiable -> missing context or wrong step ordering"),
    ]


async def test_blind_backtracks_name_the_blind_heuristic() -> None:
    script = by_step(plan=["not json at all"])
    result = await run(script, "search-blind")
    [back] = backtracks(result)
    assert (back["reason"], back["rule"]) == ("heuristic", "backtrack_one_level")


# -- the backtrack channel and its window ------------------------------------------------


async def test_a_backtrack_amends_the_ancestor_with_the_failure_summary() -> None:
    problem = get_problem(RISKY)
    script = by_step(RISKY, plan=[without_recovery(problem)])
    model = script.model()
    await plan_search(
        problem, pipeline="search", model=model, heuristic="rules", structural_repairs=False
    )
    recon_again = model.requests[4]
    prompt = recon_again.messages[0].content
    assert "## Downstream failures of earlier attempts" in prompt
    assert "A downstream step (plan) failed validation:" in prompt
    assert "**Guard feedback**: dead-end: if s4 (deploy_fix) fails" in prompt
    assert "The following path was attempted:" in prompt
    assert "- recon: " in prompt and "- strategy: " in prompt
    # the failed plan's preview is cut at 200 characters
    plan_line = next(line for line in prompt.splitlines() if line.startswith("- plan: "))
    assert plan_line.endswith("...") and len(plan_line) == len("- plan: ") + 203
    # the backtrack channel is not the retry channel
    assert "Your previous output for this step was rejected" not in prompt


async def test_a_retry_uses_the_retry_channel_not_the_backtrack_channel() -> None:
    script = by_step(plan=["not json"])
    model = script.model()
    await plan_search(script.problem, pipeline="search", model=model)
    prompt = model.requests[4].messages[0].content
    assert "## Your previous output for this step was rejected" in prompt
    assert "not parseable as JSON" in prompt
    assert "Downstream failures" not in prompt


async def test_the_failure_window_keeps_the_latest_and_summarises_older_ones() -> None:
    problem = get_problem("bug-report-timezone")
    script = by_step(plan=[unsatisfiable(problem)] * 3)
    model = script.model()
    result = await plan_search(problem, pipeline="search", model=model, window=2, heuristic="rules")
    assert result.succeeded
    strategy_prompts = [
        r.messages[0].content for r in model.requests if "(strategy)" in r.messages[0].content
    ]
    last = strategy_prompts[-1]
    assert "(1 older failure(s), summarised)" in last
    assert last.splitlines().count("## Previous Attempt Failed") == 2


# -- schema narrowing ---------------------------------------------------------------


async def test_the_plan_may_only_use_the_actions_recon_found() -> None:
    # Recon leaves out the distractor clear_cache: neither the strategy's order nor the
    # plan may name it (the guards' declared constraints, compiled into the schemas).
    found = ["find_timezone_bug", "convert_to_utc", "rerun_report"]
    strategy = {"approach": "rerun", "rationale": "rerun the report after the fix", "order": found}
    script = by_step(recon=[json.dumps({"actions": found})], strategy=[json.dumps(strategy)])
    model = ScriptedModel(script)
    await plan_search(script.problem, pipeline="search", model=model, budget=Budget(max_calls(4)))
    plan_request: ModelRequest = model.requests[3]
    assert plan_request.json_schema is not None
    assert schema_actions(plan_request.json_schema) == found
    assert constraint_names(plan_request.json_schema) == ["plan-expansive"]
    strategy_schema = model.requests[2].json_schema
    assert strategy_schema is not None
    assert strategy_schema["properties"]["order"]["items"]["enum"] == found
    assert constraint_names(strategy_schema) == ["strategy"]
