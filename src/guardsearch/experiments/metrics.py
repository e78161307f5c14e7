"""Metrics over trial results: pass rate with a Wilson 95% interval, calls, tokens,
time, backtracks, terminations, prefix reuse, and the difference between two methods.

For searches (docs/experiments.md): ε_search(B) (pass rate at budget B), E[calls], backtrack_rate,
backtrack_depth_dist, ε_search − ε_linear.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from guardsearch.core.model_usage import merge_model_usage
from guardsearch.core.steering import Steering
from guardsearch.experiments.trial import TrialResult

Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0, 1) when n = 0."""
    if n == 0:
        return 0.0, 1.0
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in 0..{n}, got {successes}")
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # The interval always contains p (rounding could put p a hair outside it).
    return min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))


def newcombe(s1: int, n1: int, s2: int, n2: int, z: float = Z95) -> tuple[float, float, float]:
    """p1 − p2 of two independent samples and its 95% interval (Newcombe's hybrid score
    method, from two Wilsons). For the same problems run by two methods use
    `newcombe_paired`."""
    p1 = s1 / n1 if n1 else 0.0
    p2 = s2 / n2 if n2 else 0.0
    l1, u1 = wilson(s1, n1, z)
    l2, u2 = wilson(s2, n2, z)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return d, low, high


def newcombe_paired(
    both: int, first_only: int, second_only: int, neither: int, z: float = Z95
) -> tuple[float, float, float]:
    """p1 − p2 for paired outcomes and its 95% interval: Newcombe's method 10 for paired
    data (Newcombe 1998, Statistics in Medicine 17:2635-2650), square-and-add of the two
    Wilson intervals corrected for the correlation between the paired outcomes.

    The 2×2 table of pairs: `both` solved by both, `first_only`, `second_only`, `neither`.
    p1 = (both + first_only) / n, p2 = (both + second_only) / n. The correlation is the
    phi coefficient with Newcombe's correction: (ad − bc − n/2) / √(row and column
    totals) when ad − bc > n/2, 0 when 0 ≤ ad − bc ≤ n/2, and uncorrected when
    ad − bc < 0; 0 when a margin is empty. (-1, 1) around 0 when n = 0.
    """
    a, b, c, d = both, first_only, second_only, neither
    if min(a, b, c, d) < 0:
        raise ValueError(f"counts must be >= 0, got {(a, b, c, d)}")
    n = a + b + c + d
    if n == 0:
        return 0.0, -1.0, 1.0
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson(a + b, n, z)
    l2, u2 = wilson(a + c, n, z)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    cross = a * d - b * c
    if margins == 0 or 0 <= cross <= n / 2:
        phi = 0.0
    else:
        phi = (cross - n / 2 if cross > 0 else cross) / math.sqrt(margins)
    diff = (b - c) / n
    below = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    above = (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    low = diff - math.sqrt(max(0.0, below))
    high = diff + math.sqrt(max(0.0, above))
    return diff, max(-1.0, min(diff, low)), min(1.0, max(diff, high))


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else 0.0


def rate(outcomes: Sequence[bool]) -> dict[str, Any]:
    n, k = len(outcomes), sum(outcomes)
    low, high = wilson(k, n)
    return {
        "n": n,
        "successes": k,
        "success_rate": k / n if n else 0.0,
        "ci_low": low,
        "ci_high": high,
    }


def summarize(results: Sequence[TrialResult]) -> dict[str, Any]:
    """One method's figures over its trials (at the budget they ran with)."""
    calls = [r.calls for r in results]
    tokens = [r.tokens for r in results]
    prompt = sum(r.prompt_tokens for r in results)
    cached = sum(r.cached_prompt_tokens for r in results)
    backtracked = [r for r in results if r.backtracks]
    depths = Counter(d for r in results for d in r.backtracks)
    won = [r for r in results if r.succeeded]
    per_model = merge_model_usage(r.models for r in results if r.models)
    return {
        **rate([r.succeeded for r in results]),
        "mean_calls": _mean(calls),
        "median_calls": _median(calls),
        "mean_calls_to_success": _mean([r.calls for r in won]),
        "mean_prompt_tokens": _mean([r.prompt_tokens for r in results]),
        "mean_completion_tokens": _mean([r.completion_tokens for r in results]),
        "mean_tokens": _mean(tokens),
        "median_tokens": _median(tokens),
        "mean_seconds": _mean([r.seconds for r in results]),
        "median_seconds": _median([r.seconds for r in results]),
        "total_seconds": sum(r.seconds for r in results),
        "backtrack_rate": len(backtracked) / len(results) if results else 0.0,
        "mean_backtracks": _mean([len(r.backtracks) for r in results]),
        "backtrack_depths": {str(d): depths[d] for d in sorted(depths)},
        "terminations": dict(sorted(Counter(r.termination for r in results).items())),
        "calls": sorted(calls),
        "steering": sum((Steering.from_dict(r.steering) for r in results), Steering()).as_dict(),
        "prefix_reuse": {
            "prompt_tokens": prompt,
            "cached_prompt_tokens": cached,
            "evaluated_prompt_tokens": prompt - cached,
            "reused_share": cached / prompt if prompt else 0.0,
        },
        # Trials on a model ladder: calls, tokens, seconds and escalations per model.
        **({"per_model": per_model} if per_model else {}),
    }


def pass_at_budget(results: Sequence[TrialResult], budget: int, *, derived: bool) -> list[bool]:
    """Outcomes at call cap `budget`.

    derived: read off runs at a larger cap (success needs calls <= budget);
    otherwise: the trials that ran with exactly that cap.
    """
    if derived:
        return [
            r.succeeded and r.calls <= budget
            for r in results
            if r.budget is None or r.budget >= budget
        ]
    return [r.succeeded for r in results if r.budget == budget]
