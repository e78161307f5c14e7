"""Budget: composable limits, checked before the call; reserve -> reconcile bookkeeping;
Budget.of, the one way numbers become a Budget; remaining() and affords()."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from guardsearch import (
    Budget,
    BudgetExceeded,
    ConfigError,
    StepBudget,
    Usage,
    deadline,
    max_calls,
    max_cost,
    max_tokens,
)
from guardsearch.core.budget import Allowance, BudgetState, Limit

CALL = Usage(calls=1)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# single limits


def test_max_calls_allows_exactly_n_calls() -> None:
    budget = Budget(max_calls(2))
    budget.reserve(CALL)
    budget.reserve(CALL)
    with pytest.raises(BudgetExceeded, match="call limit 2"):
        budget.reserve(CALL)


def test_max_tokens_counts_prompt_and_completion_tokens() -> None:
    budget = Budget(max_tokens(100))
    budget.reserve(Usage(calls=1, prompt_tokens=60, completion_tokens=40))
    with pytest.raises(BudgetExceeded, match="token limit 100"):
        budget.reserve(Usage(calls=1, prompt_tokens=1))


def test_max_cost_limits_dollars() -> None:
    budget = Budget(max_cost(0.10))
    budget.reserve(Usage(calls=1, cost=0.06))
    with pytest.raises(BudgetExceeded, match="cost limit"):
        budget.reserve(Usage(calls=1, cost=0.06))


def test_max_cost_tolerates_float_rounding_at_the_limit() -> None:
    budget = Budget(max_cost(0.3))
    for _ in range(3):
        budget.reserve(Usage(cost=0.1))  # 0.1 * 3 > 0.3 in binary floating point


def test_deadline_stops_new_calls_once_the_time_is_up() -> None:
    clock = FakeClock()
    budget = Budget(deadline(10), clock=clock)
    clock.now += 9.9
    budget.check()
    clock.now += 0.1
    with pytest.raises(BudgetExceeded, match="deadline of 10s passed"):
        budget.check()


def test_deadline_is_measured_from_when_the_budget_started() -> None:
    clock = FakeClock()
    budget = Budget(deadline(5), clock=clock)
    clock.now += 3
    assert budget.state().elapsed_s == 3


def test_an_unlimited_budget_never_stops() -> None:
    budget = Budget()
    for _ in range(100):
        budget.reserve(Usage(calls=1, prompt_tokens=10**6))
    assert budget.describe() == "unlimited"


@pytest.mark.parametrize("make", [max_calls, max_tokens, max_cost, deadline])
def test_a_negative_limit_is_a_config_error(make: Callable[[int], Limit]) -> None:
    with pytest.raises(ConfigError, match=">= 0"):
        make(-1)


# composition


def test_limits_compose_with_or_and_the_first_broken_one_stops() -> None:
    budget = Budget(max_calls(1) | max_tokens(1000))
    budget.reserve(Usage(calls=1, prompt_tokens=10))
    with pytest.raises(BudgetExceeded, match="call limit"):
        budget.reserve(Usage(calls=1, prompt_tokens=10))


def test_a_composed_limit_stops_on_any_member() -> None:
    budget = Budget(max_calls(100) | max_tokens(50) | deadline(60))
    with pytest.raises(BudgetExceeded, match="token limit"):
        budget.reserve(Usage(calls=1, prompt_tokens=51))


def test_a_composed_limit_names_all_members() -> None:
    assert Budget(max_calls(3) | max_tokens(10)).describe() == "max_calls(3) | max_tokens(10)"


def test_a_plain_lambda_is_a_limit() -> None:
    budget = Budget(lambda state, pending: state.committed.calls >= 1)
    budget.reserve(CALL)
    with pytest.raises(BudgetExceeded, match="limit reached"):
        budget.reserve(CALL)


def test_a_lambda_may_give_its_own_reason() -> None:
    budget = Budget(
        lambda state, pending: "no prompts over 5" if pending.prompt_tokens > 5 else None
    )
    with pytest.raises(BudgetExceeded, match="no prompts over 5"):
        budget.reserve(Usage(calls=1, prompt_tokens=6))


def test_a_lambda_composes_on_either_side_of_a_limit() -> None:
    def never(state: BudgetState, pending: Usage) -> None:
        return None

    for limit in (max_calls(1) | never, never | max_calls(1)):
        budget = Budget(limit)
        budget.reserve(CALL)
        with pytest.raises(BudgetExceeded, match="call limit"):
            budget.reserve(CALL)


def test_something_that_is_not_a_limit_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not a budget limit"):
        Budget(42)  # type: ignore[arg-type]


# reserve / reconcile / release


def test_reserve_raises_carrying_usage_and_books_nothing() -> None:
    budget = Budget(max_tokens(100))
    first = budget.reserve(Usage(calls=1, prompt_tokens=30, completion_tokens=10))
    budget.reconcile(first, Usage(calls=1, prompt_tokens=30, completion_tokens=5))
    used, reserved = budget.used, budget.reserved
    with pytest.raises(BudgetExceeded) as caught:
        budget.reserve(Usage(calls=1, prompt_tokens=50, completion_tokens=50))
    assert caught.value.usage == used
    assert caught.value.limit == "max_tokens(100)"
    assert (budget.used, budget.reserved) == (used, reserved)
    assert budget.open_reservations == 0


def test_open_reservations_count_against_the_limit() -> None:
    budget = Budget(max_tokens(100))
    budget.reserve(Usage(calls=1, completion_tokens=80))
    assert budget.used.total_tokens == 0
    with pytest.raises(BudgetExceeded):
        budget.reserve(Usage(calls=1, completion_tokens=30))


def test_reconcile_books_the_actual_usage_and_refunds_the_rest() -> None:
    budget = Budget(max_tokens(1000))
    reservation = budget.reserve(Usage(calls=1, prompt_tokens=10, completion_tokens=100))
    refund = budget.reconcile(reservation, Usage(calls=1, prompt_tokens=10, completion_tokens=20))
    assert refund == Usage(completion_tokens=80)
    assert budget.used == Usage(calls=1, prompt_tokens=10, completion_tokens=20)
    assert budget.reserved == Usage()


def test_a_refund_frees_room_for_the_next_call() -> None:
    budget = Budget(max_tokens(100))
    reservation = budget.reserve(Usage(calls=1, completion_tokens=100))
    budget.reconcile(reservation, Usage(calls=1, completion_tokens=40))
    budget.reserve(Usage(calls=1, completion_tokens=60))


def test_reconciling_twice_is_a_config_error() -> None:
    budget = Budget()
    reservation = budget.reserve(CALL)
    budget.reconcile(reservation, CALL)
    with pytest.raises(ConfigError, match="not open"):
        budget.reconcile(reservation, CALL)


def test_release_cancels_a_reservation_without_usage() -> None:
    budget = Budget(max_calls(1))
    budget.release(budget.reserve(CALL))
    assert (budget.used, budget.reserved, budget.open_reservations) == (Usage(), Usage(), 0)
    budget.reserve(CALL)


def test_usage_beyond_the_estimate_is_kept_as_overrun() -> None:
    budget = Budget()
    reservation = budget.reserve(Usage(calls=1, completion_tokens=10))
    budget.reconcile(reservation, Usage(calls=1, completion_tokens=15))
    assert budget.overrun == Usage(completion_tokens=5)
    assert budget.used.completion_tokens == 15


# grant_completion / check


def test_grant_completion_clamps_max_tokens_to_the_token_headroom() -> None:
    budget = Budget(max_tokens(100) | max_calls(10))
    assert budget.grant_completion(prompt_tokens=30, wanted=512) == 70


def test_grant_completion_gives_what_is_wanted_when_it_fits() -> None:
    assert Budget(max_tokens(1000)).grant_completion(prompt_tokens=30, wanted=50) == 50


def test_grant_completion_counts_open_reservations() -> None:
    budget = Budget(max_tokens(100))
    budget.reserve(Usage(calls=1, completion_tokens=50))
    assert budget.grant_completion(prompt_tokens=10, wanted=512) == 40


def test_grant_completion_uses_the_tightest_token_limit() -> None:
    budget = Budget(max_tokens(500) | max_tokens(100))
    assert budget.grant_completion(prompt_tokens=0, wanted=512) == 100


def test_grant_completion_is_unclamped_without_a_token_limit() -> None:
    assert Budget(max_calls(1)).grant_completion(prompt_tokens=10**6, wanted=512) == 512


def test_grant_completion_raises_when_not_even_a_short_answer_fits() -> None:
    with pytest.raises(BudgetExceeded, match="prompt alone needs 95"):
        Budget(max_tokens(100)).grant_completion(prompt_tokens=95, wanted=512)


def test_check_raises_when_no_further_call_is_allowed() -> None:
    budget = Budget(max_calls(1))
    budget.check()
    budget.reserve(CALL)
    with pytest.raises(BudgetExceeded):
        budget.check()


# StepBudget


def test_step_budget_bounds_the_calls_of_one_step() -> None:
    assert StepBudget(rmax=3, backtrack_budget=2).max_calls == 9


def test_step_budget_needs_at_least_one_attempt() -> None:
    with pytest.raises(ConfigError, match="rmax"):
        StepBudget(rmax=0)


def test_step_budget_rejects_a_negative_backtrack_budget() -> None:
    with pytest.raises(ConfigError, match="backtrack_budget"):
        StepBudget(backtrack_budget=-1)


# Budget.of: the one way numbers become a Budget


def test_a_number_is_a_number_of_calls() -> None:
    budget = Budget.of(2)
    assert budget.allowance == Allowance(calls=2)
    budget.reserve(CALL)
    budget.reserve(CALL)
    with pytest.raises(BudgetExceeded, match="call limit 2"):
        budget.reserve(CALL)


def test_keywords_name_each_cap() -> None:
    budget = Budget.of(calls=30, tokens=5000, seconds=60, cost=0.5)
    assert budget.allowance == Allowance(calls=30, tokens=5000, seconds=60, cost=0.5)
    assert budget.describe() == "max_calls(30) | max_tokens(5000) | deadline(60) | max_cost(0.5)"


def test_nothing_or_none_keywords_is_an_unlimited_budget() -> None:
    assert Budget.of().allowance == Allowance()
    assert Budget.of(None, calls=None, tokens=None).describe() == "unlimited"


def test_a_mapping_is_read_like_the_keywords() -> None:
    budget = Budget.of({"calls": 4, "tokens": None, "seconds": 9})
    assert budget.allowance == Allowance(calls=4, seconds=9)


def test_keywords_win_over_the_mapping() -> None:
    assert Budget.of({"calls": 4, "tokens": 100}, calls=7).allowance == Allowance(
        calls=7, tokens=100
    )


def test_a_limit_or_a_plain_function_is_wrapped() -> None:
    assert Budget.of(max_calls(3) | deadline(5)).allowance == Allowance(calls=3, seconds=5)

    def never(state: BudgetState, pending: Usage) -> str | None:
        return "no"

    with pytest.raises(BudgetExceeded, match="no"):
        Budget.of(never).reserve(CALL)


def test_a_budget_is_returned_as_it_is_so_its_ledger_is_shared() -> None:
    budget = Budget.of(5)
    assert Budget.of(budget) is budget


def test_a_budget_with_keywords_is_a_new_ledger_with_those_caps_replaced() -> None:
    clock = FakeClock()
    budget = Budget.of(calls=5, tokens=100, clock=clock)
    budget.reserve(CALL)
    wider = Budget.of(budget, tokens=900)
    assert wider is not budget and wider.used == Usage() and wider.reserved == Usage()
    assert wider.allowance == Allowance(calls=5, tokens=900)
    assert wider.clock is clock


def test_replacing_a_cap_keeps_the_other_limits() -> None:
    def custom(state: BudgetState, pending: Usage) -> None:
        return None

    budget = Budget.of(max_calls(3) | custom | deadline(5), calls=8)
    assert budget.describe() == "max_calls(8) | deadline(5) | custom"


def test_the_clock_keyword_drives_the_deadline() -> None:
    clock = FakeClock()
    budget = Budget.of(seconds=10, clock=clock)
    clock.now += 10
    with pytest.raises(BudgetExceeded, match="deadline"):
        budget.check()


@pytest.mark.parametrize(
    ("value", "keywords", "message"),
    [
        ("30", {}, "not a budget"),
        (2.5, {}, "not a budget"),
        (True, {}, "not a budget"),
        ([30], {}, "not a budget"),
        (-1, {}, "must be >= 0"),
        (None, {"tokens": -5}, "must be >= 0"),
        (None, {"calls": 2.5}, "whole number"),
        (None, {"seconds": "soon"}, "must be a number"),
        (None, {"seconds": float("nan")}, "must be a number"),
        (None, {"calls": True}, "must be a number"),
        ({"calls": 3, "minutes": 2}, {}, "unknown budget key"),
        (3, {"calls": 4}, "given twice"),
    ],
)
def test_anything_else_is_a_config_error(
    value: Any, keywords: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        Budget.of(value, **keywords)


# remaining and affords


def test_remaining_counts_used_and_reserved_and_elapsed_time() -> None:
    clock = FakeClock()
    budget = Budget.of(calls=5, tokens=100, seconds=10, cost=1.0, clock=clock)
    budget.reconcile(budget.reserve(Usage(calls=1, prompt_tokens=30)), Usage(calls=1, cost=0.25))
    budget.reserve(Usage(calls=1, prompt_tokens=20))
    clock.now += 4
    assert budget.remaining() == Allowance(calls=3, tokens=80, seconds=6.0, cost=0.75)


def test_remaining_is_none_where_nothing_limits_and_never_negative() -> None:
    budget = Budget.of(tokens=10)
    budget.reconcile(budget.reserve(Usage(prompt_tokens=10)), Usage(prompt_tokens=25))
    assert budget.remaining() == Allowance(tokens=0)


def test_affords_checks_the_estimate_without_booking_it() -> None:
    budget = Budget.of(2)
    assert budget.affords(Usage(calls=2))
    assert not budget.affords(Usage(calls=3))
    assert budget.used == Usage() and budget.open_reservations == 0


def test_affords_keeps_the_reserve_out_of_reach() -> None:
    budget = Budget.of(tokens=1000)
    budget.reconcile(budget.reserve(Usage(prompt_tokens=600)), Usage(prompt_tokens=600))
    round_ = Usage(calls=1, prompt_tokens=200)
    assert budget.affords(round_)
    assert budget.affords(round_, reserve=Usage(prompt_tokens=200))
    assert not budget.affords(round_, reserve=Usage(prompt_tokens=201))


def test_nothing_is_affordable_after_the_deadline() -> None:
    clock = FakeClock()
    budget = Budget.of(seconds=1, clock=clock)
    assert budget.affords(CALL)
    clock.now += 1
    assert not budget.affords(CALL)


def test_charge_books_usage_spent_outside_a_model_call() -> None:
    budget = Budget.of(2)
    budget.charge(CALL)
    budget.charge(CALL)
    assert budget.used == Usage(calls=2) and budget.reserved == Usage()
    with pytest.raises(BudgetExceeded):
        budget.charge(CALL)
