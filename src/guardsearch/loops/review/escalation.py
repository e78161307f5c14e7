"""Multi-level escalation: keyword filters -> source filters -> a replan.

Start with the cheapest change (keywords). Stay at a level while its last refinement
raised quality by at least `min_gain`; escalate when it did not, or when the level
has nothing new to offer. A replan costs a model call, so it is the last resort and
happens at most `max_replans` times.

Escalation is the state of *one run*: pass it that run's records
(`RefinementHistory.of_run`), so every run starts at keywords with its own replan
allowance. Refinements the loop picked out of this order because they raised quality
in earlier runs (`learned`) count towards the replan allowance but do not move the
run's position: when such a jump does not help, the cheaper levels are still open.
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

    def allowed(self, run: RefinementHistory) -> list[Level]:
        """Every level the run may still use (the replan only within its allowance)."""
        levels = list(LEVELS)
        if run.times("replan") >= self.max_replans:
            levels.remove("replan")
        return levels

    def levels(self, run: RefinementHistory) -> list[Level]:
        """The levels to try next in `run` (one run's records), in order (the first that
        offers a refinement wins)."""
        sequential = [r for r in run.records if not r.learned]
        last = sequential[-1] if sequential else None
        if last is None:
            start = 0
        else:
            index = LEVELS.index(last.refinement.level)
            gain = last.gain
            helped = gain is not None and gain >= self.min_gain
            start = index if helped else index + 1
        allowed = self.allowed(run)
        return [level for level in LEVELS[start:] if level in allowed]
