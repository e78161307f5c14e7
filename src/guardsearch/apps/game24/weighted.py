"""WeightedGame24Space: Game24Space whose soft score weighs named features, with an
optional pruning threshold — what heuristic tuning proposes and a re-run tests.

Features of a state (rules of thumb about the numbers left, not a solver):
- `whole numbers`: every number is a whole number >= 0 (1 or 0);
- `divide 24`: the share of numbers that divide 24;
- `at most 24`: every number is <= 24 (1 or 0).
score = sum(weight × feature) / sum(weight). The default weights (1, 2, 0) give exactly
`space.plausibility`'s score. With `threshold`, a state scoring below it fails its guard
(the search never builds on it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from guardsearch.apps.game24.space import Game24Space
from guardsearch.core.context import Context
from guardsearch.core.guard_result import Check, GuardResult
from guardsearch.search.node import Node
from guardsearch.search.space import Proposal

DEFAULT_WEIGHTS = {"whole numbers": 1.0, "divide 24": 2.0, "at most 24": 0.0}


def features(values: Sequence[Fraction]) -> dict[str, float]:
    """The soft features of the numbers left, each in 0..1."""
    n = len(values) or 1
    whole = all(v.denominator == 1 and v >= 0 for v in values)
    divide = sum(1 for v in values if v.denominator == 1 and 0 < v <= 24 and 24 % v == 0)
    return {
        "whole numbers": float(whole),
        "divide 24": divide / n,
        "at most 24": float(all(v <= 24 for v in values)),
    }


def weighted_score(values: Sequence[Fraction], weights: Mapping[str, float]) -> float:
    feats = features(values)
    total = sum(max(0.0, w) for w in weights.values())
    if total == 0:
        return 0.5
    return sum(max(0.0, weights.get(k, 0.0)) * v for k, v in feats.items()) / total


@dataclass(kw_only=True)
class WeightedGame24Space(Game24Space):
    """The Game of 24 with tunable feature weights and a pruning threshold."""

    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    threshold: float | None = None

    async def evaluate(self, node: Node, proposal: Proposal, context: Context) -> GuardResult:
        values = [Fraction(v) for v, _ in proposal.state["left"]]
        if len(values) == 1 or self.value:
            return await super().evaluate(node, proposal, context)
        feats = features(values)
        score = weighted_score(values, self.weights)
        checks = tuple(
            Check(name=k, passed=v == 1.0, weight=self.weights.get(k, 0.0), detail=f"{v:.2f}")
            for k, v in feats.items()
        )
        if self.threshold is not None and score < self.threshold:
            return GuardResult(
                passed=False,
                score=score,
                checks=checks,
                guard="game24-weighted",
                feedback=f"scored {score:.2f}, below the threshold {self.threshold:.2f}",
            )
        return GuardResult(passed=True, score=score, checks=checks, guard="game24-weighted")
