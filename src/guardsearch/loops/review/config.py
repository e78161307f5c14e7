"""Settings of the review loop: attempts, success size, thresholds, escalation, budget."""

from __future__ import annotations

from dataclasses import dataclass, field

from guardsearch.core.budget import Budget, Limit, deadline, max_calls, max_tokens
from guardsearch.core.errors import ConfigError
from guardsearch.loops.review.escalation import Escalation
from guardsearch.loops.review.thresholds import DomainThresholds


@dataclass(frozen=True, kw_only=True)
class ReviewConfig:
    max_attempts: int = 4
    min_items: int = 3
    thresholds: DomainThresholds = field(default_factory=DomainThresholds)
    escalation: Escalation = field(default_factory=Escalation)
    max_calls: int = 40
    max_tokens: int | None = None
    max_seconds: float | None = None

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigError(f"max_attempts must be >= 1, got {self.max_attempts}")
        if self.min_items < 1:
            raise ConfigError(f"min_items must be >= 1, got {self.min_items}")
        if self.max_calls < 1:
            raise ConfigError(f"max_calls must be >= 1, got {self.max_calls}")

    def budget(self) -> Budget:
        limit: Limit = max_calls(self.max_calls)
        if self.max_tokens is not None:
            limit = limit | max_tokens(self.max_tokens)
        if self.max_seconds is not None:
            limit = limit | deadline(self.max_seconds)
        return Budget(limit)
