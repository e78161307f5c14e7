"""Distillation (docs/experiments.md): winning search paths become few-shot examples for a
linear (no-search) method, and the experiment measures what that buys.

`winning_paths` reads the stored trials of a search method; `pick` chooses a few,
spread over the problems, deterministically; the suite turns them into its method's
examples (for the Game of 24, chain-of-thought steps `a op b = c (left: ...)`). The
rise is the paired difference between the linear method with and without them, on
problems none of the examples came from; the cost is the longer prompt on every call
plus the search calls paid once to find the examples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from guardsearch.experiments.trial import TrialResult


def winning_paths(results: Sequence[TrialResult], method: str) -> list[TrialResult]:
    """Successful trials of `method` that stored a path, by problem id."""
    won = [r for r in results if r.method == method and r.succeeded and r.detail.get("path")]
    return sorted(won, key=lambda r: (r.problem, r.trial, r.budget or 0))


def pick(paths: Sequence[TrialResult], n: int) -> list[TrialResult]:
    """`n` paths spread evenly over the list (one per problem), deterministic."""
    unique: dict[str, TrialResult] = {}
    for r in paths:
        unique.setdefault(r.problem, r)
    chosen = list(unique.values())
    if n >= len(chosen):
        return chosen
    step = len(chosen) / n
    return [chosen[int(i * step)] for i in range(n)]


def source_cost(chosen: Sequence[TrialResult]) -> dict[str, Any]:
    """What the search paid for the chosen paths (paid once, reused on every call)."""
    return {
        "examples": len(chosen),
        "problems": [r.problem for r in chosen],
        "calls": sum(r.calls for r in chosen),
        "tokens": sum(r.tokens for r in chosen),
        "seconds": round(sum(r.seconds for r in chosen), 3),
    }


def distillation_summary(
    card: Mapping[str, Any], *, linear: str, distilled: str, source: Mapping[str, Any]
) -> dict[str, Any]:
    """The rise of `distilled` over `linear` (paired, from the scorecard) and its cost."""
    delta = next(
        (
            d
            for d in card.get("deltas", [])
            if {d["method"], d["vs"]} == {linear, distilled} and d["method"] == distilled
        ),
        None,
    )
    methods = card.get("methods", {})
    base, tuned = methods.get(linear), methods.get(distilled)
    if delta is None or base is None or tuned is None:
        return {"available": False, "linear": linear, "distilled": distilled}
    return {
        "available": True,
        "linear": linear,
        "distilled": distilled,
        "n": delta["n"],
        "rise": delta["delta"],
        "rise_ci": [delta["ci_low"], delta["ci_high"]],
        "solved": [delta["successes_vs"], delta["successes"]],
        "prompt_tokens_per_call": [
            base["mean_prompt_tokens"] / max(base["mean_calls"], 1e-9),
            tuned["mean_prompt_tokens"] / max(tuned["mean_calls"], 1e-9),
        ],
        "tokens_per_problem": [delta["mean_tokens_vs"], delta["mean_tokens"]],
        "source": dict(source),
    }
