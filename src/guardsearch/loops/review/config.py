"""Settings of the review loop: attempts, success size, thresholds, escalation.

The loop's budget is not a setting: `ReviewLoop.run(request, budget=...)` takes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from guardsearch.core.errors import ConfigError
from guardsearch.loops.review.escalation import Escalation
from guardsearch.loops.review.thresholds import DomainThresholds

# Model calls a run may make when no budget is given.
DEFAULT_BUDGET_CALLS = 40


@dataclass(frozen=True, kw_only=True)
class ReviewConfig:
    max_attempts: int = 4
    min_items: int = 3
    thresholds: DomainThresholds = field(default_factory=DomainThresholds)
    escalation: Escalation = field(default_factory=Escalation)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigError(f"max_attempts must be >= 1, got {self.max_attempts}")
        if self.min_items < 1:
            raise ConfigError(f"min_items must be >= 1, got {self.min_items}")
