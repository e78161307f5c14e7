"""Verdicts on fetched candidates and the QualityReport that reviews them.

A verifier says, for each candidate, accepted or rejected and why; the report counts
them (total fetched, verified, rejected, the rejection breakdown by reason), scores the
batch (verified / fetched) against the domain's threshold and carries the refinement
the loop suggests to do better.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from guardsearch.core.errors import ConfigError

Level = Literal["keywords", "sources", "replan"]
LEVELS: tuple[Level, ...] = ("keywords", "sources", "replan")


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """One candidate judged: `reason` names why it was rejected (empty when accepted)."""

    key: str
    accepted: bool
    reason: str = ""
    detail: str = ""
    by: str = "rule"

    def __post_init__(self) -> None:
        if not self.accepted and not self.reason:
            raise ConfigError(f"a rejected candidate needs a reason: {self.key!r}")


class Refinement(BaseModel):
    """A change to the next attempt, at one escalation level (keywords -> sources -> replan)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    level: Level
    reason: str
    target: str = Field(default="", description="the rejection reason it addresses")
    add_negative_keywords: list[str] = Field(default_factory=list)
    add_positive_keywords: list[str] = Field(default_factory=list)
    source_filters: dict[str, list[str]] = Field(default_factory=dict)

    @property
    def key(self) -> str:
        """What the refinement history learns about: a level and the reason it targets."""
        return f"{self.level}:{self.target}"

    @property
    def signature(self) -> tuple[object, ...]:
        """Equal signatures mean the same change (never apply one twice)."""
        filters = tuple(sorted((k, tuple(sorted(v))) for k, v in self.source_filters.items()))
        return (
            self.level,
            tuple(sorted(self.add_negative_keywords)),
            tuple(sorted(self.add_positive_keywords)),
            filters,
        )


class QualityReport(BaseModel):
    """The review of one attempt's results."""

    model_config = ConfigDict(extra="forbid")

    total_fetched: int
    verified: int
    rejected: int
    rejection_breakdown: dict[str, int]
    quality_score: float
    threshold: float
    meets_threshold: bool
    suggested_refinement: Refinement | None = None

    @property
    def dominant_reasons(self) -> list[str]:
        """Rejection reasons, most frequent first (ties by name, so the order is stable)."""
        return [r for r, _ in sorted(self.rejection_breakdown.items(), key=lambda i: (-i[1], i[0]))]


def quality_report(
    verdicts: Sequence[Verdict],
    threshold: float,
    suggested_refinement: Refinement | None = None,
) -> QualityReport:
    """Count `verdicts` and score them: quality = verified / fetched (0 when nothing came)."""
    if not 0.0 <= threshold <= 1.0:
        raise ConfigError(f"a quality threshold is in [0, 1], got {threshold}")
    keys = [v.key for v in verdicts]
    if len(set(keys)) != len(keys):
        raise ConfigError("a quality report counts each candidate once; duplicate keys given")
    verified = sum(1 for v in verdicts if v.accepted)
    breakdown = Counter(v.reason for v in verdicts if not v.accepted)
    total = len(verdicts)
    score = verified / total if total else 0.0
    return QualityReport(
        total_fetched=total,
        verified=verified,
        rejected=total - verified,
        rejection_breakdown=dict(sorted(breakdown.items(), key=lambda i: (-i[1], i[0]))),
        quality_score=round(score, 4),
        threshold=threshold,
        meets_threshold=total > 0 and score >= threshold,
        suggested_refinement=suggested_refinement,
    )
