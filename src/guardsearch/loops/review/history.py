"""Which refinements raised quality: the record the loop learns the next refinement from.

Each applied refinement is recorded with the quality before it and, once the next
attempt is reviewed, the quality after it. The history answers three questions:
which level to try next (escalation.py), whether a change was already tried (never
apply one twice), and which of several candidate refinements has paid off before
(mean gain per `level:reason` key). It serialises to JSON so a caller can carry it
across runs of the same app.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from guardsearch.loops.review.quality import Refinement


@dataclass
class RefinementRecord:
    attempt: int
    refinement: Refinement
    quality_before: float
    quality_after: float | None = None

    @property
    def gain(self) -> float | None:
        if self.quality_after is None:
            return None
        return round(self.quality_after - self.quality_before, 6)

    def as_dict(self) -> dict[str, Any]:
        return {
            "attempt": self.attempt,
            "refinement": self.refinement.model_dump(),
            "quality_before": self.quality_before,
            "quality_after": self.quality_after,
            "gain": self.gain,
        }


class RefinementHistory:
    """Applied refinements and their effect on quality, in order."""

    def __init__(self, records: Sequence[RefinementRecord] = ()) -> None:
        self.records: list[RefinementRecord] = list(records)

    def applied(self, attempt: int, refinement: Refinement, quality_before: float) -> None:
        self.records.append(RefinementRecord(attempt, refinement, quality_before))

    def outcome(self, quality_after: float) -> None:
        """The quality of the attempt that followed the last applied refinement."""
        if self.records and self.records[-1].quality_after is None:
            self.records[-1].quality_after = quality_after

    @property
    def last(self) -> RefinementRecord | None:
        return self.records[-1] if self.records else None

    def tried(self, refinement: Refinement) -> bool:
        """Was this exact change applied before? (A replan is new every time: the
        model writes it; escalation limits how many happen.)"""
        if refinement.level == "replan":
            return False
        return any(r.refinement.signature == refinement.signature for r in self.records)

    def times(self, level: str) -> int:
        return sum(1 for r in self.records if r.refinement.level == level)

    def mean_gain(self, key: str) -> float | None:
        gains = [g for r in self.records if r.refinement.key == key and (g := r.gain) is not None]
        return sum(gains) / len(gains) if gains else None

    def rank(self, candidates: Sequence[Refinement]) -> list[Refinement]:
        """Untried candidates, those whose key raised quality before first, then unknown
        ones (in the order given), then those that did not help."""
        fresh = [c for c in candidates if not self.tried(c)]

        def order(item: tuple[int, Refinement]) -> tuple[int, float, int]:
            index, refinement = item
            gain = self.mean_gain(refinement.key)
            if gain is None:
                return (1, 0.0, index)
            return (0, -gain, index) if gain > 0 else (2, -gain, index)

        return [r for _, r in sorted(enumerate(fresh), key=order)]

    def as_list(self) -> list[dict[str, Any]]:
        return [r.as_dict() for r in self.records]

    @classmethod
    def from_list(cls, items: Sequence[dict[str, Any]]) -> RefinementHistory:
        return cls(
            [
                RefinementRecord(
                    attempt=int(item["attempt"]),
                    refinement=Refinement.model_validate(item["refinement"]),
                    quality_before=float(item["quality_before"]),
                    quality_after=(
                        None if item.get("quality_after") is None else float(item["quality_after"])
                    ),
                )
                for item in items
            ]
        )
