"""Numbers from people and models are bounded on the text, before any conversion."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest

from guardsearch.apps.game24.arith import StepError, parse_number
from guardsearch.apps.game24.solve import puzzle_numbers
from guardsearch.core.errors import ConfigError


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("4", Fraction(4)),
        ("-3", Fraction(-3)),
        ("+7", Fraction(7)),
        ("2/3", Fraction(2, 3)),
        ("1.5", Fraction(3, 2)),
        (".5", Fraction(1, 2)),
        ("1e3", Fraction(1000)),
        ("1.5e-3", Fraction(3, 2000)),
        (" 10 ", Fraction(10)),
        ("999999999999999", Fraction(999_999_999_999_999)),
    ],
)
def test_numbers_of_the_game_parse_exactly(text: str, value: Fraction) -> None:
    assert parse_number(text) == value


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("1e10000000", "exponent"),
        ("1e5000", "exponent"),
        ("1e-5000", "exponent"),
        ("1e16", "exponent"),
        ("9" * 16, "too many digits"),
        ("9" * 100_000, "too many digits"),
        ("1/" + "9" * 16, "too many digits"),
        ("0." + "1" * 16, "too many digits"),
        ("1/0", "not a number"),
        ("nan", "not a number"),
        ("inf", "not a number"),
        ("1_000", "not a number"),
        ("٤", "not a number"),  # an Arabic-Indic digit: Fraction would take it
        ("10\x00", "not a number"),
        ("", "not a number"),
        (".", "not a number"),
        ("e5", "not a number"),
        ("2/-3", "not a number"),
    ],
)
def test_anything_else_is_refused_at_once(text: str, why: str) -> None:
    started = time.perf_counter()
    with pytest.raises(StepError, match=why):
        parse_number(text)
    assert time.perf_counter() - started < 0.05


@pytest.mark.parametrize(
    ("numbers", "message"),
    [
        ("1", "takes 2 to 6 numbers, got 1"),
        (" ".join(["1"] * 20), "takes 2 to 6 numbers, got 20"),
        ("1 " * 30_000, "takes 2 to 6 numbers, got 30000"),
        ("four 5 6 10", "'four' is not a number"),
        ("1e10000000 1 1 1", "exponent is out of range"),
        ("", "no numbers given"),
    ],
)
def test_a_puzzle_is_checked_in_one_place(numbers: str, message: str) -> None:
    started = time.perf_counter()
    with pytest.raises(ConfigError, match=message):
        puzzle_numbers(numbers)
    assert time.perf_counter() - started < 0.05


def test_a_good_puzzle_keeps_its_numbers() -> None:
    assert puzzle_numbers("4, 5 6 10") == tuple(Fraction(n) for n in (4, 5, 6, 10))
    assert puzzle_numbers("-1 2 3 4")[0] == -1
