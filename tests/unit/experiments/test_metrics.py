"""Metrics arithmetic: Wilson and Newcombe intervals, summaries, pass rate at a budget."""

from __future__ import annotations

import pytest
from helpers import result

from guardsearch.experiments.metrics import (
    newcombe,
    newcombe_paired,
    pass_at_budget,
    summarize,
    wilson,
)


def test_wilson_matches_published_values() -> None:
    # Newcombe (1998), table I: 81/263 -> 0.2553 .. 0.3662; 0/10 -> 0 .. 0.2775.
    low, high = wilson(81, 263)
    assert low == pytest.approx(0.2553, abs=1e-4)
    assert high == pytest.approx(0.3662, abs=1e-4)
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)


def test_wilson_is_symmetric_and_contains_the_rate() -> None:
    for k in range(0, 21):
        low, high = wilson(k, 20)
        assert low <= k / 20 <= high
        mirror = wilson(20 - k, 20)
        assert (1 - high, 1 - low) == pytest.approx(mirror)


def test_wilson_with_no_trials_is_uninformative_and_bad_counts_raise() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson(3, 2)


def test_newcombe_matches_the_published_example() -> None:
    # Newcombe (1998), method 10: 56/70 vs 48/80 -> 0.2000, 0.0524 .. 0.3339.
    d, low, high = newcombe(56, 70, 48, 80)
    assert d == pytest.approx(0.2)
    assert low == pytest.approx(0.0524, abs=1e-4)
    assert high == pytest.approx(0.3339, abs=1e-4)


def test_newcombe_paired_matches_a_published_example() -> None:
    # Fagerland, Lydersen & Laake (2014/2017), the paired 2x2 table of Cavo et al. (2012):
    # both 59, first only 6, second only 16, neither 80 -> -0.0621 (-0.1186 to -0.0046)
    # by Newcombe's square-and-add (method 10 of Newcombe 1998, paired data).
    d, low, high = newcombe_paired(59, 6, 16, 80)
    assert d == pytest.approx(-10 / 161)
    assert low == pytest.approx(-0.1186, abs=1e-4)
    assert high == pytest.approx(-0.0046, abs=1e-4)


def test_newcombe_paired_without_discordant_pairs_is_narrow_and_contains_zero() -> None:
    # 10 problems, both methods solved the same 3: the unpaired interval is ±36 points,
    # the paired one ±20.
    d, low, high = newcombe_paired(3, 0, 0, 7)
    assert d == 0.0
    assert (low, high) == pytest.approx((-0.2002, 0.2002), abs=1e-4)
    _, ulow, uhigh = newcombe(3, 10, 3, 10)
    assert uhigh - ulow > 0.7
    assert high - low < 0.6 * (uhigh - ulow)
    # More agreeing pairs: narrower still.
    _, low2, high2 = newcombe_paired(30, 0, 0, 70)
    assert low2 < 0 < high2
    assert high2 - low2 < high - low


def test_newcombe_paired_is_antisymmetric_and_bounded() -> None:
    for a in range(0, 5):
        for b in range(0, 5):
            for c in range(0, 5):
                for dd in range(0, 4):
                    if a + b + c + dd == 0:
                        continue
                    d, low, high = newcombe_paired(a, b, c, dd)
                    assert -1.0 <= low <= d <= high <= 1.0
                    # Swapping the methods mirrors the interval.
                    d2, low2, high2 = newcombe_paired(a, c, b, dd)
                    assert (d2, low2, high2) == pytest.approx((-d, -high, -low))
    assert newcombe_paired(0, 0, 0, 0) == (0.0, -1.0, 1.0)
    with pytest.raises(ValueError):
        newcombe_paired(-1, 0, 0, 1)


def test_summarize_counts_calls_tokens_time_backtracks_and_terminations() -> None:
    results = [
        result(problem="a", succeeded=True, calls=2, backtracks=[1, 2]),
        result(problem="b", succeeded=False, calls=10, backtracks=[]),
        result(problem="c", succeeded=True, calls=3, backtracks=[1]),
    ]
    s = summarize(results)
    assert (s["n"], s["successes"]) == (3, 2)
    assert s["success_rate"] == pytest.approx(2 / 3)
    assert (s["ci_low"], s["ci_high"]) == pytest.approx(wilson(2, 3))
    assert s["mean_calls"] == pytest.approx(5.0)
    assert s["median_calls"] == 3
    assert s["mean_calls_to_success"] == pytest.approx(2.5)
    assert s["mean_prompt_tokens"] == pytest.approx(50.0)
    assert s["mean_completion_tokens"] == pytest.approx(10.0)
    assert s["mean_tokens"] == pytest.approx(60.0)
    assert s["mean_seconds"] == pytest.approx(2.5)
    assert s["backtrack_rate"] == pytest.approx(2 / 3)
    assert s["backtrack_depths"] == {"1": 2, "2": 1}
    assert s["terminations"] == {"budget_exhausted": 1, "success": 2}
    reuse = s["prefix_reuse"]
    assert reuse["prompt_tokens"] == 150
    assert reuse["cached_prompt_tokens"] == 75
    assert reuse["evaluated_prompt_tokens"] == 75
    assert reuse["reused_share"] == pytest.approx(0.5)
    assert s["calls"] == [2, 3, 10]


def test_summarize_of_nothing_is_zeros() -> None:
    s = summarize([])
    assert s["n"] == 0
    assert s["mean_calls"] == 0.0
    assert s["prefix_reuse"]["reused_share"] == 0.0


def test_pass_rate_at_a_smaller_budget_is_read_off_the_call_counts() -> None:
    results = [
        result(problem="a", succeeded=True, calls=5, budget=60),
        result(problem="b", succeeded=True, calls=30, budget=60),
        result(problem="c", succeeded=False, calls=60, budget=60),
    ]
    assert pass_at_budget(results, 10, derived=True) == [True, False, False]
    assert pass_at_budget(results, 30, derived=True) == [True, True, False]
    assert pass_at_budget(results, 60, derived=True) == [True, True, False]


def test_pass_rate_without_derivation_uses_the_runs_at_that_budget() -> None:
    results = [
        result(problem="a", succeeded=True, calls=5, budget=10),
        result(problem="a", succeeded=False, calls=3, budget=20),
    ]
    assert pass_at_budget(results, 10, derived=False) == [True]
    assert pass_at_budget(results, 20, derived=False) == [False]
    assert pass_at_budget(results, 40, derived=False) == []
