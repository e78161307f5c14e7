"""WeightedGame24Space: Game24Space whose soft score weighs named features, with an
optional pruning threshold — what heuristic tuning proposes and a re-run tests.

The features are `score.features` (rules of thumb about the numbers left, not a
solver): `no dead numbers`, `divide 24`, `whole numbers`, `at most 24`.
score = sum(weight × feature) / sum(weight). The default weights (`DEFAULT_WEIGHTS`)
give exactly the shipped score (`score.plausibility`). With `threshold`, a state
scoring below it fails its guard (the search never builds on it). States with one or
two numbers left are judged exactly, as in `Game24Space`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from guardsearch.apps.game24.score import DEFAULT_WEIGHTS, features, weighted_score
from guardsearch.apps.game24.space import Game24Space
from guardsearch.core.context import Context
from guardsearch.core.guard_result import Check, GuardResult
from guardsearch.search.node import Node
from guardsearch.search.space import Proposal

__all__ = ["DEFAULT_WEIGHTS", "WeightedGame24Space", "features", "weighted_score"]


@dataclass(kw_only=True)
class WeightedGame24Space(Game24Space):
    """The Game of 24 with tunable feature weights and a pruning threshold."""

    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    threshold: float | None = None

    async def evaluate(self, node: Node, proposal: Proposal, context: Context) -> GuardResult:
        values = [Fraction(v) for v, _ in proposal.state["left"]]
        if len(values) <= 2 or self.value:
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
