"""False-reject and false-accept rates with Wilson 95% intervals."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials ((0, 1) when n = 0)."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Rate:
    """k of n, as a share with its interval."""

    k: int
    n: int

    @property
    def value(self) -> float | None:
        return self.k / self.n if self.n else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.k, self.n)

    def as_dict(self) -> dict[str, object]:
        low, high = self.interval
        value = self.value
        return {
            "k": self.k,
            "n": self.n,
            "rate": None if value is None else round(value, 4),
            "ci95": [round(low, 4), round(high, 4)],
        }

    def show(self) -> str:
        if not self.n:
            return "n/a"
        low, high = self.interval
        return f"{self.k}/{self.n} = {self.value:.1%} [{low:.1%}, {high:.1%}]"


@dataclass(frozen=True)
class Outcome:
    """One case judged: what it should get and what the guard said."""

    label: str
    shape: str
    passed: bool

    @property
    def wrong(self) -> bool:
        return self.passed != (self.label == "pass")


def false_reject(outcomes: Iterable[Outcome]) -> Rate:
    """Right outputs (label pass) the guard rejected."""
    right = [o for o in outcomes if o.label == "pass"]
    return Rate(sum(1 for o in right if not o.passed), len(right))


def false_accept(outcomes: Iterable[Outcome]) -> Rate:
    """Wrong outputs (label fail) the guard accepted."""
    wrong = [o for o in outcomes if o.label == "fail"]
    return Rate(sum(1 for o in wrong if o.passed), len(wrong))


def by_shape(outcomes: Sequence[Outcome]) -> dict[str, Rate]:
    """Per shape: how often the guard got it wrong (a false reject for a pass shape,
    a false accept for a fail shape)."""
    out: dict[str, Rate] = {}
    for shape in sorted({o.shape for o in outcomes}):
        mine = [o for o in outcomes if o.shape == shape]
        out[shape] = Rate(sum(1 for o in mine if o.wrong), len(mine))
    return out
