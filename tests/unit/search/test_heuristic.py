"""The dfs rule table (`RuleHeuristic`) as a function of the feedback alone."""

from __future__ import annotations

import pytest

from guardsearch import GuardResult
from guardsearch.search import Failure, RuleHeuristic
from guardsearch.search.heuristic import decide_with_rule


def failure(feedback: str, *, retry: int = 1, history: tuple[str, ...] = ()) -> Failure:
    return Failure(
        step="plan",
        level=3,
        verdict=GuardResult.fail(feedback),
        retry_count=retry,
        history=history,
    )


@pytest.mark.parametrize(
    ("feedback", "depth", "cause"),
    [
        ("not parseable as JSON", 0, "formatting error"),
        ("missing required field: 'steps'", 0, "formatting error"),
        ("step s2: retry_budget <= 0", 0, "invalid step structure"),
        ("preconditions {x} not satisfiable", 1, "missing context or wrong step ordering"),
        ("goal tokens unreachable", 1, "plan doesn't solve the problem"),
        ("total_retry_budget exceeds R_max", 1, "strategy overcommitted"),
        ("dead-end: no path reaches goal", 2, "fundamental structural problem"),
        ("MAX_EXPLORATIONS exceeded", 1, "plan too complex to verify"),
        ("the plan is too vague", 0, "no rule matched: retry in place"),
    ],
)
def test_each_rule_maps_feedback_to_a_backtrack_depth(
    feedback: str, depth: int, cause: str
) -> None:
    assert RuleHeuristic().explain(failure(feedback)) == (depth, cause)


def test_a_dead_end_without_no_path_is_not_the_recon_rule() -> None:
    assert RuleHeuristic()(failure("dead-end reached")) == 0


def test_repeated_feedback_escalates_but_never_beyond_three_levels() -> None:
    h = RuleHeuristic()
    assert h(failure("vague", retry=2, history=("vague",))) == 2
    assert h(failure("vague", retry=5, history=("vague",) * 4)) == 3
    assert h(failure("vague", retry=2, history=("other",))) == 0


def test_repetition_overrides_the_convergence_rules() -> None:
    h = RuleHeuristic()
    repeated = failure("x not satisfiable", retry=3, history=("x not satisfiable",) * 2)
    assert h(repeated) == 3


@pytest.mark.parametrize(
    ("feedback", "history", "rule"),
    [
        ("not parseable as JSON", (), "not parseable -> formatting error"),
        ("x not satisfiable", (), "not satisfiable -> missing context or wrong step ordering"),
        ("dead-end: no path", (), "dead-end + no path -> fundamental structural problem"),
        ("vague", ("vague",), "same feedback 2x -> repeated identical failures"),
        ("vague", (), "no rule matched -> retry in place"),
    ],
)
def test_rule_names_the_row_that_decided(
    feedback: str, history: tuple[str, ...], rule: str
) -> None:
    assert RuleHeuristic().rule(failure(feedback, retry=2, history=history)) == rule


def test_a_dedup_verdict_is_not_feedback_and_never_escalates() -> None:
    text = "no new candidates: every proposal repeats an earlier one (x)"
    repeated = Failure(
        step="plan",
        level=3,
        verdict=GuardResult.fail(text, "dedup"),
        retry_count=3,
        history=(text, text),
    )
    assert RuleHeuristic().explain(repeated) == (0, "duplicate output")
    assert RuleHeuristic().rule(repeated).startswith("duplicate output -> not guard feedback")


async def test_decide_with_rule_names_a_plain_function_heuristic() -> None:
    def always_two(f: Failure) -> int:
        return 2

    assert await decide_with_rule(always_two, failure("x")) == (2, "always_two")
    assert await decide_with_rule(RuleHeuristic(), failure("x unreachable")) == (
        1,
        "unreachable -> plan doesn't solve the problem",
    )
