"""Which refinements raised quality: the record the loop learns the next refinement from.

Each applied refinement is recorded with the run it belongs to, the run's domain, the
quality before it and, once the next attempt is reviewed, the quality after it.

Two kinds of question are asked of it, with different scopes:

- **per run** (`of_run`): where the run's escalation stands (escalation.py), how many
  replans the run made, and whether a change was already applied in this run (never
  apply one twice). A new run starts afresh: `begin_run` gives it a new id.
- **across runs** (the learning): which refinements paid off before, as the mean
  quality gain per `level:reason` key, in the run's domain when the domain has a record
  of that key (otherwise in any domain). `rank` orders the refinements offered at a
  level by it; `proven` picks the ones that raised quality in earlier runs of the same
  domain, which the loop tries before the escalation order.

It serialises to JSON (`as_list` / `from_list`; history_file.py keeps it in a file),
so it carries across runs and processes of the same app.
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
    run: int = 0
    domain: str = ""
    learned: bool = False  # chosen from earlier runs' gains, out of the escalation order

    @property
    def gain(self) -> float | None:
        if self.quality_after is None:
            return None
        return round(self.quality_after - self.quality_before, 6)

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "domain": self.domain,
            "attempt": self.attempt,
            "refinement": self.refinement.model_dump(),
            "learned": self.learned,
            "quality_before": self.quality_before,
            "quality_after": self.quality_after,
            "gain": self.gain,
        }

    @classmethod
    def from_dict(cls, item: dict[str, Any]) -> RefinementRecord:
        after = item.get("quality_after")
        return cls(
            attempt=int(item["attempt"]),
            refinement=Refinement.model_validate(item["refinement"]),
            quality_before=float(item["quality_before"]),
            quality_after=None if after is None else float(after),
            run=int(item.get("run", 0)),
            domain=str(item.get("domain", "")),
            learned=bool(item.get("learned", False)),
        )


class RefinementHistory:
    """Applied refinements and their effect on quality, in order, over one or more runs."""

    def __init__(self, records: Sequence[RefinementRecord] = ()) -> None:
        self.records: list[RefinementRecord] = list(records)
        self.last_run = max((r.run for r in self.records), default=0)

    def begin_run(self) -> int:
        """A new run id: the run's escalation and 'already applied' start empty."""
        self.last_run = max([self.last_run, *(r.run for r in self.records)]) + 1
        return self.last_run

    def of_run(self, run: int) -> RefinementHistory:
        """The records of one run (the same record objects)."""
        return RefinementHistory([r for r in self.records if r.run == run])

    def applied(
        self,
        attempt: int,
        refinement: Refinement,
        quality_before: float,
        *,
        run: int = 0,
        domain: str = "",
        learned: bool = False,
    ) -> None:
        self.records.append(
            RefinementRecord(
                attempt, refinement, quality_before, run=run, domain=domain, learned=learned
            )
        )
        self.last_run = max(self.last_run, run)

    def outcome(self, quality_after: float, *, run: int | None = None) -> None:
        """The quality of the attempt that followed the last refinement applied (in `run`)."""
        mine = [r for r in self.records if run is None or r.run == run]
        if mine and mine[-1].quality_after is None:
            mine[-1].quality_after = quality_after

    @property
    def last(self) -> RefinementRecord | None:
        return self.records[-1] if self.records else None

    def tried(self, refinement: Refinement, *, run: int | None = None) -> bool:
        """Was this exact change applied before (in `run`, or at all)? (A replan is new
        every time: the model writes it; escalation limits how many happen.)"""
        if refinement.level == "replan":
            return False
        return any(
            r.refinement.signature == refinement.signature
            for r in self.records
            if run is None or r.run == run
        )

    def times(self, level: str) -> int:
        return sum(1 for r in self.records if r.refinement.level == level)

    def gains(
        self,
        key: str,
        *,
        domain: str | None = None,
        exclude_run: int | None = None,
        strict: bool = False,
    ) -> list[float]:
        """The gains recorded for `key`: in `domain` if it has any, else (unless `strict`)
        in every domain."""
        known = [
            (r.domain, g)
            for r in self.records
            if r.refinement.key == key and r.run != exclude_run and (g := r.gain) is not None
        ]
        if domain is None:
            return [g for _, g in known]
        local = [g for d, g in known if d == domain]
        return local if local or strict else [g for _, g in known]

    def mean_gain(
        self,
        key: str,
        *,
        domain: str | None = None,
        exclude_run: int | None = None,
        strict: bool = False,
    ) -> float | None:
        gains = self.gains(key, domain=domain, exclude_run=exclude_run, strict=strict)
        return sum(gains) / len(gains) if gains else None

    def rank(
        self,
        candidates: Sequence[Refinement],
        *,
        run: int | None = None,
        domain: str | None = None,
    ) -> list[Refinement]:
        """Candidates not yet applied (in `run`): those whose key raised quality before
        first (largest mean gain first), then unknown ones (in the order given), then
        those that did not help."""
        fresh = [c for c in candidates if not self.tried(c, run=run)]

        def order(item: tuple[int, Refinement]) -> tuple[int, float, int]:
            index, refinement = item
            gain = self.mean_gain(refinement.key, domain=domain)
            if gain is None:
                return (1, 0.0, index)
            return (0, -gain, index) if gain > 0 else (2, -gain, index)

        return [r for _, r in sorted(enumerate(fresh), key=order)]

    def proven(
        self,
        candidates: Sequence[Refinement],
        *,
        run: int,
        domain: str | None,
        min_gain: float,
    ) -> list[Refinement]:
        """Candidates whose key raised quality by at least `min_gain` on average in
        *earlier* runs of the same domain, best first; never one applied in `run`
        already, nor one whose key failed to help in `run` (this run's evidence beats
        the past)."""
        failed_here = {
            r.refinement.key
            for r in self.records
            if r.run == run and (g := r.gain) is not None and g < min_gain
        }
        scored: list[tuple[float, int, Refinement]] = []
        for index, candidate in enumerate(candidates):
            if self.tried(candidate, run=run) or candidate.key in failed_here:
                continue
            gain = self.mean_gain(candidate.key, domain=domain, exclude_run=run, strict=True)
            if gain is not None and gain >= min_gain:
                scored.append((-gain, index, candidate))
        return [c for _, _, c in sorted(scored, key=lambda s: (s[0], s[1]))]

    def as_list(self) -> list[dict[str, Any]]:
        return [r.as_dict() for r in self.records]

    @classmethod
    def from_list(cls, items: Sequence[dict[str, Any]]) -> RefinementHistory:
        return cls([RefinementRecord.from_dict(item) for item in items])
