"""Multi-level escalation (seed 002): keyword filters -> source filters -> a replan.

Start with the cheapest change (keywords). Stay at a level while its last refinement
raised quality by at least `min_gain`; escalate when it did not, or when the level
has nothing new to offer. A replan costs a model call, so it is the last resort and
happens at most `max_replans` times.
"""

from __future__ import annotations

from dataclasses import dataclass

from guardsearch.core.errors import ConfigError
from guardsearch.loops.review.history import RefinementHistory
from guardsearch.loops.review.quality import LEVELS, Level


@dataclass(frozen=True, kw_only=True)
class Escalation:
    min_gain: float = 0.05
    max_replans: int = 1

    def __post_init__(self) -> None:
        if self.max_replans < 0:
            raise ConfigError(f"max_replans must be >= 0, got {self.max_replans}")

    def levels(self, history: RefinementHistory) -> list[Level]:
        """The levels to try next, in order (the first that offers a refinement wins)."""
        last = history.last
        if last is None:
            start = 0
        else:
            index = LEVELS.index(last.refinement.level)
            gain = last.gain
            helped = gain is not None and gain >= self.min_gain
            start = index if helped else index + 1
        levels = list(LEVELS[start:])
        if history.times("replan") >= self.max_replans and "replan" in levels:
            levels.remove("replan")
        return levels
