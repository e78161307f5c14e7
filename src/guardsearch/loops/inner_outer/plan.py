"""What the outer planner hands the inner loop, and what it says about the results."""

from __future__ import annotations

from dataclasses import dataclass

from guardsearch.core.errors import ConfigError


@dataclass(frozen=True, kw_only=True)
class ProbePlan:
    """A strategy for the inner loop: starting terms, a pool of narrowing terms, the
    kind of article wanted (a description filter candidate), an optional target band."""

    topic: str
    terms: tuple[str, ...]
    pool: tuple[str, ...] = ()
    kind: str = ""
    band: tuple[float, float] | None = None
    source: str = "model"

    def __post_init__(self) -> None:
        if not self.terms:
            raise ConfigError(f"a probe plan needs at least one term (topic {self.topic!r})")


@dataclass(frozen=True, kw_only=True)
class Evaluation:
    """The planner's verdict on the final results."""

    satisfied: bool
    reason: str = ""
