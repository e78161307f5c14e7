"""The rule table of seed 000 §4.1 as a function of the feedback alone."""

from __future__ import annotations

import pytest

from guardsearch import GuardResult
from guardsearch.search import Failure, RuleHeuristic


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
