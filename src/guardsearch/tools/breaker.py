"""Tier 3: a circuit breaker over search outcomes.

It opens after `consecutive` failures in a row, or once at least `min_calls` outcomes
are in and `ratio` or more of them failed (the seed: 3 consecutive failures or 50% of
queries failing). An open breaker stays open for the run: the loop then stops
searching and synthesises from what it has, saying so.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CircuitBreaker:
    consecutive: int = 3
    ratio: float = 0.5
    min_calls: int = 4
    calls: int = 0
    failures: int = 0
    streak: int = 0
    reason: str | None = None

    def record(self, ok: bool) -> None:
        """Count one outcome; may open the breaker."""
        self.calls += 1
        if ok:
            self.streak = 0
        else:
            self.failures += 1
            self.streak += 1
        if self.reason is None:
            if self.streak >= self.consecutive:
                self.reason = f"{self.streak} consecutive search failures"
            elif self.calls >= self.min_calls and self.failures / self.calls >= self.ratio:
                self.reason = f"{self.failures} of {self.calls} searches failed"

    @property
    def open(self) -> bool:
        return self.reason is not None
