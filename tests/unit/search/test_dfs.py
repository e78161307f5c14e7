"""dfs: feedback-guided retries and backtracking over a four-step pipeline like the plan app's."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from search_helpers import (
    OBJECTIVE,
    PIPELINE,
    ByStep,
    CountingSpace,
    path_of,
    pipeline,
    step_of,
)

from guardsearch import (
    Budget,
    ConfigError,
    GuardResult,
    ModelRequest,
    ScriptedModel,
    StepBudget,
    max_calls,
)
from guardsearch.search import (
    BacktrackAdvisor,
    Failure,
    ModelHeuristic,
    Node,
    RuleHeuristic,
    StepSpace,
    search,
    search_sync,
)
from guardsearch.search.heuristic import GIVE_UP
from guardsearch.search.strategies.dfs import b_max

START = ["analysis", "recon", "strategy", "plan"]


async def run_with_plan_feedback(feedback: str, **options: object) -> list[str]:
    """The plan step fails once with `feedback`, then passes; returns the steps called."""
    script = ByStep({"plan": [f"BAD {feedback}"]})
    result = await search(pipeline(), "dfs", model=script.model(), **options)
    assert result.succeeded
    return script.calls


# -- the rule table, one test per row --------------------------------------------------


async def test_row_not_parseable_as_json_retries_the_plan() -> None:
    calls = await run_with_plan_feedback("not parseable as JSON: Expecting value")
    assert calls == [*START, "plan"]


async def test_row_retry_budget_not_positive_retries_the_plan() -> None:
    calls = await run_with_plan_feedback("step 3: retry_budget <= 0")
    assert calls == [*START, "plan"]


async def test_row_preconditions_not_satisfiable_backtracks_to_strategy() -> None:
    calls = await run_with_plan_feedback("preconditions {db_ready} not satisfiable")
    assert calls == [*START, "strategy", "plan"]


async def test_row_goal_tokens_unreachable_backtracks_to_strategy() -> None:
    calls = await run_with_plan_feedback("goal tokens unreachable from the initial state")
    assert calls == [*START, "strategy", "plan"]


async def test_row_total_retry_budget_exceeds_rmax_backtracks_to_strategy() -> None:
    calls = await run_with_plan_feedback("total_retry_budget exceeds R_max (12 > 9)")
    assert calls == [*START, "strategy", "plan"]


async def test_row_dead_end_with_no_path_backtracks_to_recon() -> None:
    calls = await run_with_plan_feedback("dead-end: no path reaches goal")
    assert calls == [*START, "recon", "strategy", "plan"]


async def test_row_max_explorations_exceeded_backtracks_to_strategy() -> None:
    calls = await run_with_plan_feedback("MAX_EXPLORATIONS exceeded while verifying")
    assert calls == [*START, "strategy", "plan"]


async def test_row_same_feedback_across_rmax_retries_backtracks_to_analysis() -> None:
    script = ByStep({"plan": [f"BAD plan misses the point | {i}" for i in range(3)]})
    heuristic = RuleHeuristic(escalate_after=3)  # "same feedback across rmax (3) retries"
    result = await search(pipeline(rmax=3), "dfs", model=script.model(), heuristic=heuristic)
    assert result.succeeded
    assert script.calls == [*START, "plan", "plan", *START]


# -- the heuristic and the retry channel --------------------------------------------------


async def test_repeated_identical_feedback_escalates_by_the_retry_count() -> None:
    # Two different plans that fail the same way (a repeated *output* is not feedback).
    script = ByStep({"plan": ["BAD plan misses the point | 1", "BAD plan misses the point | 2"]})
    result = await search(pipeline(), "dfs", model=script.model())
    assert result.succeeded
    # The second identical failure (retry 2) escalates min(2, 3) = 2 levels: recon.
    assert script.calls == [*START, "plan", "recon", "strategy", "plan"]


async def test_formatting_errors_never_escalate_even_when_repeated() -> None:
    script = ByStep({"plan": ["BAD not parseable as JSON"] * 2})
    result = await search(pipeline(), "dfs", model=script.model())
    assert result.succeeded
    assert script.calls == [*START, "plan", "plan"]


async def test_a_retry_sees_its_feedback_in_the_retry_channel() -> None:
    model = ByStep({"plan": ["BAD not parseable as JSON: line 1"]}).model()
    await search(pipeline(), "dfs", model=model)
    retry_prompt = model.requests[4].messages[0].content
    assert "## Your previous output for this step was rejected" in retry_prompt
    assert "not parseable as JSON: line 1" in retry_prompt


async def test_a_repeated_failed_output_is_retried_with_a_fresh_seed_not_escalated() -> None:
    script = ByStep({"plan": ["BAD plan misses the point"] * 2})  # the 2nd is a duplicate
    model = script.model()
    # schedule='fixed': every attempt at the first one's seed and temperature, so what is
    # checked is dfs's own shift after a repeat (the default schedule moves seeds anyway).
    result = await search(pipeline(), "dfs", model=model, schedule="fixed")
    assert result.succeeded
    assert script.calls == [*START, "plan", "plan"]  # no climb to recon
    assert result.trace.of_kind("backtrack") == []
    plan_seeds = [r.seed for r in model.requests if step_of(r) == "plan"]
    assert plan_seeds == [0, 0, 1]  # the regeneration after the repeat: fresh seed
    retry = [e for e in result.trace.of_kind("retry") if e.data.get("reason") == "duplicate"]
    assert len(retry) == 1 and retry[0].data["seed_offset"] == 1
    # The repeat put nothing in the retry channel: only the real feedback is there (and
    # the rejected output, listed once among what was tried at this node).
    last_prompt = model.requests[-1].messages[0].content
    assert last_prompt.count("- attempt ") == 1
    assert last_prompt.count("- BAD plan misses the point -> rejected, as above") == 1
    assert "no new candidates" not in last_prompt


async def test_an_upstream_regeneration_that_repeats_itself_does_not_escalate() -> None:
    script = ByStep(
        {
            "strategy": ["S", "S", "S"],  # after the backtrack, twice the same output
            "plan": ["BAD preconditions {x} not satisfiable"],
        }
    )
    model = script.model()
    # schedule='fixed': every attempt at the first one's seed and temperature, so what is
    # checked is dfs's own shift after a repeat (the default schedule moves seeds anyway).
    result = await search(pipeline(), "dfs", model=model, schedule="fixed")
    assert result.succeeded
    # Retried within strategy's rmax (3) with fresh seeds; never up to the analysis.
    assert script.calls == [*START, "strategy", "strategy", "strategy", "plan"]
    assert [r.seed for r in model.requests if step_of(r) == "strategy"] == [0, 0, 1, 2]
    heuristic_notes = [e for e in result.trace.of_kind("note") if e.data.get("by")]
    assert [e.data["depth"] for e in heuristic_notes] == [1]  # only the plan's failure
    [back] = result.trace.of_kind("backtrack")
    assert (back.step, back.data["to_step"]) == ("plan", "strategy")


async def test_repeats_that_use_up_the_retries_go_up_one_level_as_a_ceiling() -> None:
    budgets = {s: StepBudget(rmax=2, backtrack_budget=2) for s in PIPELINE}
    script = ByStep({"strategy": ["S"] * 3, "plan": ["BAD preconditions {x} not satisfiable"]})
    result = await search(pipeline(budgets=budgets), "dfs", model=script.model())
    assert result.succeeded
    assert script.calls == [*START, "strategy", "strategy", "recon", "strategy", "plan"]
    events = result.trace.of_kind("backtrack")
    backs = [(e.step, e.data["to_step"], e.data["reason"]) for e in events]
    assert backs == [("plan", "strategy", "heuristic"), ("strategy", "recon", "ceiling")]
    assert result.trace.of_kind("backtrack")[-1].data["feedback"].startswith("no new output")


async def test_duplicate_temperature_applies_only_to_the_regeneration_after_a_repeat() -> None:
    script = ByStep({"plan": ["BAD plan misses the point"] * 2})
    model = script.model()
    # schedule='fixed': every attempt at the first one's seed and temperature, so what is
    # checked is dfs's own shift after a repeat (the default schedule moves seeds anyway).
    result = await search(
        pipeline(), "dfs", model=model, duplicate_temperature=0.3, schedule="fixed"
    )
    assert result.succeeded
    temps = [r.temperature for r in model.requests]
    assert temps == [0.0] * 5 + [0.3]


def test_duplicate_temperature_must_not_be_negative() -> None:
    with pytest.raises(ConfigError, match="duplicate_temperature"):
        search_sync(pipeline(), "dfs", model=ByStep().model(), duplicate_temperature=-1.0)


async def test_the_heuristic_is_pluggable_and_may_be_a_plain_function() -> None:
    seen: list[Failure] = []

    def always_up_two(failure: Failure) -> int:
        seen.append(failure)
        return 2

    script = ByStep({"plan": ["BAD anything at all"]})
    result = await search(pipeline(), "dfs", model=script.model(), heuristic=always_up_two)
    assert result.succeeded
    assert script.calls == [*START, "recon", "strategy", "plan"]
    assert seen[0].step == "plan" and seen[0].level == 3 and seen[0].retry_count == 1
    assert seen[0].steps == PIPELINE


async def test_a_model_heuristic_asks_the_model_and_spends_budget() -> None:
    script = ByStep({"plan": ["BAD something vague happened"]})
    questions: list[ModelRequest] = []

    def answer(request: ModelRequest) -> str:
        if request.json_schema and "cause" in request.json_schema["properties"]:
            questions.append(request)
            return '{"cause": "recon"}'
        return script(request)

    result = await search(
        pipeline(), "dfs", model=ScriptedModel(answer), heuristic=ModelHeuristic()
    )
    assert result.succeeded
    assert len(questions) == 1
    assert questions[0].messages[0].content.startswith("Primary objective:")
    assert script.calls == [*START, "recon", "strategy", "plan"]
    assert result.calls == 4 + 1 + 3  # the pipeline, the question, the redone levels


async def test_the_model_heuristic_defers_to_a_matching_rule_without_a_call() -> None:
    heuristic = ModelHeuristic(model=ScriptedModel([]))
    failure = Failure(
        step="plan",
        level=3,
        verdict=GuardResult.fail("x not satisfiable"),
        retry_count=1,
        steps=PIPELINE,
    )
    assert await heuristic(failure) == 1


async def test_giving_up_ends_the_search_as_all_pruned() -> None:
    script = ByStep({"plan": ["BAD hopeless"]})
    result = await search(pipeline(), "dfs", model=script.model(), heuristic=lambda f: GIVE_UP)
    assert result.termination == "all_pruned"
    assert not result.succeeded


# -- the space's own backtrack advice ------------------------------------------------------


@dataclass(kw_only=True)
class AdvisedPipeline(StepSpace):
    """The pipeline, whose space knows where a failure points: "root cause: <step>"."""

    asked: list[tuple[str, Failure]] = field(default_factory=list)

    def backtrack_depth(self, node: Node, failure: Failure) -> int | None:
        self.asked.append((node.id, failure))
        names = [s.name for s in self.steps]
        for name in names:
            if f"root cause: {name}" in failure.feedback:
                return failure.level - names.index(name)
        if "hopeless" in failure.feedback:
            return GIVE_UP
        return None


def advised() -> AdvisedPipeline:
    return AdvisedPipeline(objective=OBJECTIVE, steps=pipeline().steps)


async def test_the_spaces_backtrack_depth_is_asked_before_the_heuristic() -> None:
    heuristic_saw: list[Failure] = []

    def retry_in_place(failure: Failure) -> int:
        heuristic_saw.append(failure)
        return 0

    space = advised()
    script = ByStep({"plan": ["BAD the plan broke; root cause: recon"]})
    result = await search(space, "dfs", model=script.model(), heuristic=retry_in_place)
    assert result.succeeded
    assert script.calls == [*START, "recon", "strategy", "plan"]  # went up 2, not 0
    assert heuristic_saw == []
    (node_id, failure), *_ = space.asked
    assert failure.step == "plan" and failure.level == 3
    assert result.tree[node_id].step == "strategy"  # the node whose expansion failed
    back = result.trace.of_kind("backtrack")[0].data
    assert (back["depth"], back["reason"]) == (2, "space")
    note = next(e for e in result.trace.of_kind("note") if e.data.get("message") == "heuristic")
    assert (note.data["depth"], note.data["by"]) == (2, "space")


async def test_a_space_without_an_opinion_leaves_the_decision_to_the_heuristic() -> None:
    space = advised()
    script = ByStep({"plan": ["BAD preconditions {db_ready} not satisfiable"]})
    result = await search(space, "dfs", model=script.model())
    assert result.succeeded
    assert len(space.asked) == 1  # asked, said None
    assert script.calls == [*START, "strategy", "plan"]  # the rule table's depth 1
    assert result.trace.of_kind("backtrack")[0].data["reason"] == "heuristic"


async def test_a_space_can_give_up_the_search() -> None:
    script = ByStep({"plan": ["BAD hopeless"]})
    result = await search(advised(), "dfs", model=script.model())
    assert result.termination == "all_pruned"


async def test_a_space_without_the_hook_is_searched_with_the_heuristic() -> None:
    class WithoutHook:
        """A space that implements the protocol but not the optional hook."""

        def __init__(self, inner: StepSpace) -> None:
            self.inner = inner

        def __getattr__(self, name: str) -> object:
            if name == "backtrack_depth":
                raise AttributeError(name)
            return getattr(self.inner, name)

    space = WithoutHook(advised())
    assert not isinstance(space, BacktrackAdvisor) and isinstance(pipeline(), BacktrackAdvisor)
    script = ByStep({"plan": ["BAD preconditions not satisfiable; root cause: analysis"]})
    result = await search(space, "dfs", model=script.model())  # type: ignore[arg-type]
    assert result.succeeded
    assert script.calls == [*START, "strategy", "plan"]  # the rule table's depth 1


async def test_a_bad_backtrack_depth_is_a_config_error() -> None:
    @dataclass(kw_only=True)
    class Broken(AdvisedPipeline):
        def backtrack_depth(self, node: Node, failure: Failure) -> int | None:
            return -5

    base = pipeline()
    script = ByStep({"plan": ["BAD anything"]})
    with pytest.raises(ConfigError, match="backtrack_depth returned -5"):
        await search(
            Broken(objective=base.objective, steps=base.steps), "dfs", model=script.model()
        )


# -- context amendment on backtrack ------------------------------------------------------


async def test_a_backtrack_amends_the_ancestor_with_the_failure_summary() -> None:
    long_plan = "BAD preconditions {x} not satisfiable " + "z" * 300
    model = ByStep({"plan": [long_plan]}).model()
    result = await search(pipeline(), "dfs", model=model)
    assert result.succeeded
    strategy_again = model.requests[4]
    assert step_of(strategy_again) == "strategy"
    text = strategy_again.messages[0].content
    assert text.startswith("Primary objective: Plan the migration")
    assert "## Previous Attempt Failed" in text
    assert "A downstream step (plan) failed validation:" in text
    assert "**Guard feedback**: preconditions {x} not satisfiable" in text
    assert "- strategy: strategy output 1" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("- plan: "))
    assert line.endswith("...") and len(line) <= len("- plan: ") + 200 + 3
    assert "Generate a different output that avoids this failure mode." in text
    events = result.trace.of_kind("backtrack")
    assert [(e.step, e.data["to_step"], e.data["depth"]) for e in events] == [
        ("plan", "strategy", 1)
    ]


async def test_sibling_branches_do_not_share_artifacts_or_retry_feedback() -> None:
    model = ByStep(
        {"plan": ["BAD not parseable: S1 plan", "BAD preconditions {a} not satisfiable"]}
    ).model()
    result = await search(pipeline(), "dfs", model=model)
    assert result.succeeded
    strategies = [n for n in result.tree if n.step == "strategy"]
    s1, s2 = strategies
    assert s1.parent == s2.parent
    # S2's branch sees S1's failure only through the backtrack channel, as a summary.
    assert all("strategy output 1" not in text for _, text in s2.context.artifacts)
    assert s2.context.feedback == ()
    plan_under_s2 = [r for r in model.requests if step_of(r) == "plan"][-1]
    rendered = plan_under_s2.messages[0].content
    assert "## Your previous output for this step was rejected" not in rendered
    assert "not parseable: S1 plan" not in rendered.split("## Downstream failures")[0]
    # S1's own context never saw anything of S2.
    assert all("strategy output 2" not in text for _, text in s1.context.artifacts)


# -- terminations --------------------------------------------------------------------------


async def test_success_when_every_step_passes() -> None:
    script = ByStep()
    result = await search(pipeline(), "dfs", model=script.model())
    assert result.termination == "success" and result.calls == 4
    assert result.answer == "plan output 1"


async def test_budget_exhausted_when_the_call_budget_runs_out() -> None:
    script = ByStep({"plan": ["BAD not parseable"] * 10})
    result = await search(pipeline(), "dfs", model=script.model(), budget=Budget(max_calls(5)))
    assert result.termination == "budget_exhausted"
    assert result.calls == 5


async def test_backtrack_ceiling_when_the_root_runs_out_of_visits_with_budget_left_below() -> None:
    budgets = {s: StepBudget(rmax=1, backtrack_budget=1) for s in PIPELINE}
    budgets["plan"] = StepBudget(rmax=1, backtrack_budget=3)  # 4 plan visits; 2 are used
    script = ByStep({"plan": ["BAD dead-end: no path reaches goal"] * 20})
    result = await search(pipeline(budgets=budgets), "dfs", model=script.model())
    assert result.termination == "backtrack_ceiling"
    assert not result.succeeded
    assert script.calls == [*START, "recon", "strategy", "plan", "analysis"]
    last = result.trace.of_kind("backtrack")[-1].data
    assert last["to"] is None and last["alternatives"] is True
    assert last["rule"] == "visit limit of analysis"


async def test_all_pruned_when_every_level_has_spent_its_visits() -> None:
    budgets = {s: StepBudget(rmax=1, backtrack_budget=1) for s in PIPELINE}
    script = ByStep({"plan": ["BAD dead-end: no path reaches goal"] * 20})
    result = await search(pipeline(budgets=budgets), "dfs", model=script.model())
    # The same run as above, but the plan level's two visits are all it may have.
    assert script.calls == [*START, "recon", "strategy", "plan", "analysis"]
    assert result.termination == "all_pruned"
    last = result.trace.of_kind("backtrack")[-1].data
    assert last["to"] is None and last["alternatives"] is False


async def test_all_pruned_when_the_first_levels_retries_fail() -> None:
    script = ByStep({"analysis": ["BAD vague", "BAD too short", "BAD off topic"]})
    result = await search(pipeline(rmax=3), "dfs", model=script.model())
    assert script.calls == ["analysis"] * 3
    assert result.termination == "all_pruned"
    assert result.trace.of_kind("backtrack")[-1].data["rule"] == "rmax exhausted at analysis"


async def test_all_pruned_in_a_linear_pipeline_whose_last_step_runs_out_of_retries() -> None:
    budgets = {s: StepBudget(rmax=2, backtrack_budget=0) for s in PIPELINE}
    script = ByStep({"plan": ["BAD vague", "BAD vaguer"]})
    result = await search(pipeline(budgets=budgets), "dfs", model=script.model())
    assert script.calls == [*START, "plan"]
    assert result.termination == "all_pruned"


async def test_all_pruned_when_the_first_level_is_fatal() -> None:
    script = ByStep({"analysis": ["FATAL the request is out of scope"]})
    result = await search(pipeline(), "dfs", model=script.model())
    assert result.termination == "all_pruned"
    assert script.calls == ["analysis"]


async def test_cancelled_when_the_stop_signal_fires() -> None:
    script = ByStep()
    calls = iter(range(100))
    result = await search(
        pipeline(), "dfs", model=script.model(), should_stop=lambda: next(calls) >= 3
    )
    assert result.termination == "cancelled"
    assert not result.succeeded


async def test_a_fatal_verdict_below_the_root_prunes_only_that_branch() -> None:
    script = ByStep({"plan": ["FATAL the plan deletes production data"]})
    result = await search(pipeline(), "dfs", model=script.model())
    assert result.succeeded
    assert script.calls == [*START, "strategy", "plan"]


# -- budgets: B_max ----------------------------------------------------------------------------


def test_b_max_is_the_sum_of_rmax_times_one_plus_backtracks() -> None:
    budgets = {
        "analysis": StepBudget(rmax=2, backtrack_budget=1),
        "recon": StepBudget(rmax=2, backtrack_budget=2),
        "strategy": StepBudget(rmax=2, backtrack_budget=3),
        "plan": StepBudget(rmax=3, backtrack_budget=7),
    }
    assert b_max(pipeline(budgets=budgets), levels=4) == 4 + 6 + 8 + 24


FEEDBACK = st.sampled_from(
    [
        "ok",
        "BAD not parseable as JSON",
        "BAD preconditions not satisfiable",
        "BAD dead-end: no path reaches goal",
        "BAD MAX_EXPLORATIONS exceeded",
        "BAD same old problem",
        "FATAL forbidden",
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    levels=st.integers(1, 4),
    rmax=st.lists(st.integers(1, 3), min_size=4, max_size=4),
    backtracks=st.lists(st.integers(0, 3), min_size=4, max_size=4),
    outcomes=st.lists(FEEDBACK, min_size=1, max_size=60),
    limit=st.one_of(st.none(), st.integers(0, 30)),
)
def test_dfs_never_exceeds_b_max_per_level_budgets_or_max_calls(
    levels: int,
    rmax: list[int],
    backtracks: list[int],
    outcomes: list[str],
    limit: int | None,
) -> None:
    names = PIPELINE[:levels]
    budgets = {
        n: StepBudget(rmax=rmax[i], backtrack_budget=backtracks[i]) for i, n in enumerate(names)
    }
    space = pipeline(names, budgets=budgets)
    feed = iter(outcomes)
    per_step: dict[str, int] = {}

    def answer(request: ModelRequest) -> str:
        step = step_of(request)
        per_step[step] = per_step.get(step, 0) + 1
        verdict = next(feed, "ok")
        unique = f"{step} {sum(per_step.values())}"
        return unique if verdict == "ok" else f"{verdict} ({unique})"

    budget = Budget(max_calls(limit)) if limit is not None else Budget()
    result = search_sync(space, "dfs", model=ScriptedModel(answer), budget=budget)
    assert result.calls <= b_max(space, levels=levels)
    for name, count in per_step.items():
        assert count <= budgets[name].max_calls
    if limit is not None:
        assert result.calls <= limit
    if result.termination != "budget_exhausted":
        assert result.termination in ("success", "all_pruned", "backtrack_ceiling")


SIBLINGS = {"start": "1, 2", "1": "5", "1 5": "8", "2": "3", "2 3": "7"}


async def test_prefer_siblings_tries_paid_alternatives_before_regenerating() -> None:
    model = ScriptedModel(lambda request: SIBLINGS.get(path_of(request), "9"))
    result = await search(
        CountingSpace(goal=7, depth_limit=3),
        "dfs",
        model=model,
        budgets=StepBudget(rmax=1, backtrack_budget=3),
        prefer_siblings=True,
    )
    assert result.succeeded and result.answer == [2, 3, 7]
    assert [path_of(r) for r in model.requests] == ["start", "1", "1 5", "2", "2 3"]


async def test_without_prefer_siblings_a_failed_node_is_regenerated_first() -> None:
    model = ScriptedModel(lambda request: SIBLINGS.get(path_of(request), "9"))
    result = await search(
        CountingSpace(goal=7, depth_limit=3),
        "dfs",
        model=model,
        budgets=StepBudget(rmax=1, backtrack_budget=3),
    )
    assert result.succeeded
    assert [path_of(r) for r in model.requests] == ["start", "1", "1 5", "1", "2", "2 3"]


def test_rule_heuristic_defaults_match_the_seed_sketch() -> None:
    h = RuleHeuristic()
    assert (h.escalate_after, h.max_escalation, h.default) == (2, 3, 0)


@pytest.mark.parametrize("levels", [1, 2, 3, 4])
def test_b_max_counts_only_the_levels_searched(levels: int) -> None:
    assert b_max(pipeline(), levels=levels) == levels * 3 * 3
