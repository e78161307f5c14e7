"""The adaptive target band: hit counts the inner loop aims for, learnt by EMA (docs/probe.md).

A fixed band ("10-30 hits") does not fit every query: some topics have 3 matching
articles, some 300. The band keeps an exponential moving average of the chosen hit
counts; after `adapt_after` consecutive readings outside the band, it moves its centre
halfway (in log space) towards the EMA, keeping its width ratio and never dropping
below `min_acceptable`. Stability is judged against this band (policy.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from guardsearch.core.errors import ConfigError


@dataclass(frozen=True, kw_only=True)
class AdaptiveBand:
    lo: float = 5.0
    hi: float = 40.0
    alpha: float = 0.4
    tolerance: float = 0.5
    min_acceptable: int = 2
    adapt_after: int = 2
    ema: float | None = None
    misses: int = 0

    def __post_init__(self) -> None:
        if not 0 < self.lo <= self.hi:
            raise ConfigError(f"band needs 0 < lo <= hi, got [{self.lo}, {self.hi}]")
        if not 0 < self.alpha <= 1:
            raise ConfigError(f"EMA alpha must be in (0, 1], got {self.alpha}")
        if self.tolerance < 0:
            raise ConfigError(f"tolerance must be >= 0, got {self.tolerance}")

    def contains(self, count: int) -> bool:
        return self.lo <= count <= self.hi and count >= self.min_acceptable

    def agrees(self, count: int, previous: int | None) -> bool:
        """Two readings agree within the tolerance (relative to the larger one)."""
        if previous is None:
            return False
        return abs(count - previous) <= self.tolerance * max(count, previous, 1)

    def observe(self, count: int) -> AdaptiveBand:
        """The band after one more chosen hit count."""
        ema = float(count) if self.ema is None else self.alpha * count + (1 - self.alpha) * self.ema
        misses = 0 if self.contains(count) else self.misses + 1
        band = replace(self, ema=ema, misses=misses)
        if misses >= self.adapt_after:
            band = band.recentred()
        return band

    def recentred(self) -> AdaptiveBand:
        """Move the band halfway (log space) towards the EMA; width ratio kept."""
        if self.ema is None:
            return self
        ratio = self.hi / self.lo
        centre = math.sqrt(self.lo * self.hi)
        target = max(float(self.min_acceptable), self.ema)
        new_centre = math.sqrt(centre * target)
        lo = max(float(self.min_acceptable), new_centre / math.sqrt(ratio))
        hi = max(lo, new_centre * math.sqrt(ratio))
        return replace(self, lo=round(lo, 3), hi=round(hi, 3), misses=0)

    def widened(self, factor: float) -> AdaptiveBand:
        """A wider band (conservative mode accepts sooner)."""
        if factor < 1:
            raise ConfigError(f"widening factor must be >= 1, got {factor}")
        lo = max(float(self.min_acceptable), self.lo / factor)
        return replace(self, lo=round(lo, 3), hi=round(self.hi * factor, 3))

    def distance(self, count: int) -> float:
        """How far `count` is outside the band, in log units (0 inside)."""
        if self.contains(count):
            return 0.0
        low = max(self.lo, float(self.min_acceptable))
        edge = low if count < low else self.hi
        return abs(math.log((count + 1) / (edge + 1))) + (1.0 if count == 0 else 0.0)
