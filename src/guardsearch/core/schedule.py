"""Schedule: the temperature and seed of attempt k at one node (issue 16, diversify).

A small model asked the same question at temperature 0 answers the same again,
whatever the feedback says; a retry that repeats itself spends a call on nothing.
So attempt k of a step (or expansion k of a search node) follows a schedule: the
first attempt is greedy and seeded like any other request (so runs
stay replayable), later ones sample warmer with fresh, explicit seeds.

    Schedule()                       # the default: 0 -> 0.7 -> 1.0, fresh seeds
    Schedule((0.0, 0.3))             # gentler
    Schedule.fixed()                 # every attempt like the first (the old behaviour)

The schedule is a floor above the caller's own temperature: with a step or search
temperature of 0.9, the attempts run at 0.9, 0.9, 1.0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from guardsearch.core.errors import ConfigError


@dataclass(frozen=True)
class Schedule:
    """Attempt k (1-based) samples at `max(base, temperatures[k-1])` (the last entry
    repeats) and, with `fresh_seeds`, at seed offset k-1 (in units of the caller's
    stride: one seed per attempt for a step, `samples` seeds for a search expansion)."""

    temperatures: tuple[float, ...] = (0.0, 0.7, 1.0)
    fresh_seeds: bool = True

    def __post_init__(self) -> None:
        temps = tuple(float(t) for t in self.temperatures)
        if not temps:
            raise ConfigError("a schedule needs at least one temperature")
        if any(t < 0 or t > 2 for t in temps):
            raise ConfigError(f"schedule temperatures must be in 0..2, got {list(temps)}")
        object.__setattr__(self, "temperatures", temps)

    @classmethod
    def fixed(cls) -> Schedule:
        """Every attempt at the caller's temperature and seed (no diversification)."""
        return cls((0.0,), fresh_seeds=False)

    @classmethod
    def of(cls, value: Schedule | str | list[float] | tuple[float, ...] | None) -> Schedule:
        """A schedule from a Schedule, "default", "fixed", a list of temperatures
        (fresh seeds) or None (the default); anything else is a ConfigError."""
        if value is None or value == "default":
            return DEFAULT_SCHEDULE
        if isinstance(value, Schedule):
            return value
        if value == "fixed":
            return cls.fixed()
        if isinstance(value, list | tuple) and all(
            isinstance(t, int | float) and not isinstance(t, bool) for t in value
        ):
            return cls(tuple(float(t) for t in value))
        raise ConfigError(
            f"schedule must be 'default', 'fixed' or a list of temperatures, got {value!r}"
        )

    def temperature(self, attempt: int, base: float = 0.0) -> float:
        """The temperature of attempt `attempt` (1-based) for a caller at `base`."""
        index = min(max(attempt, 1), len(self.temperatures)) - 1
        return max(base, self.temperatures[index])

    def seed_offset(self, attempt: int) -> int:
        """How many strides attempt `attempt` moves the seed (0 for the first)."""
        return max(attempt - 1, 0) if self.fresh_seeds else 0

    def as_dict(self) -> dict[str, Any]:
        return {"temperatures": list(self.temperatures), "fresh_seeds": self.fresh_seeds}


DEFAULT_SCHEDULE = Schedule()
