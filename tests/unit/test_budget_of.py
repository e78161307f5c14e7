"""Budget.of: the one way numbers become a Budget; remaining() and affords()."""

from __future__ import annotations

from typing import Any

import pytest

from guardsearch import Budget, BudgetExceeded, ConfigError, Usage, deadline, max_calls
from guardsearch.core import Allowance, BudgetState

CALL = Usage(calls=1)


class FakeClock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


# the input forms


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
