"""What a review run produced: attempts with their quality reports, items, the answer."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guardsearch.core.errors import ConfigError
from guardsearch.core.outcome import Outcome
from guardsearch.core.source import Source
from guardsearch.core.usage import Usage
from guardsearch.loops.review.history import RefinementHistory
from guardsearch.loops.review.quality import QualityReport, Refinement
from guardsearch.loops.review.reflection import Reflection


@dataclass(frozen=True, kw_only=True)
class AttemptRecord:
    number: int
    spec: dict[str, Any]
    applied: Refinement | None
    report: QualityReport
    accepted: list[str]
    usage: Usage
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "attempt": self.number,
            "spec": self.spec,
            "applied_refinement": self.applied.model_dump() if self.applied else None,
            "quality_report": self.report.model_dump(),
            "accepted": self.accepted,
            "calls": self.usage.calls,
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True, kw_only=True)
class ReviewRun(Outcome):
    """One review run: its reflection, attempts, verified items, caveats and answer.

    It `succeeded` when it verified at least one item without an error. Besides the
    core stop reasons it stops at `threshold_met` or with `no_refinement` left.
    """

    request: str
    reflection: Reflection | None
    domain: str
    threshold: float
    attempts: list[AttemptRecord]
    items: list[Source]
    caveats: list[str]
    answer: str
    history: RefinementHistory = field(repr=False, compare=False)
    error: str = ""
    # The run's number in `history` (what its refinement records name as their run).
    history_run: int = 0

    @property
    def refinements(self) -> RefinementHistory:
        """This run's refinements (`history` may hold earlier runs' too)."""
        return self.history.of_run(self.history_run)

    def details(self) -> dict[str, Any]:
        return {
            "request": self.request,
            "reflection": self.reflection.model_dump() if self.reflection else None,
            "domain": self.domain,
            "threshold": self.threshold,
            "attempts": [a.as_dict() for a in self.attempts],
            "history_run": self.history_run,
            "refinement_history": self.refinements.as_list(),
            "items": [
                {
                    "key": c.key,
                    "title": c.title,
                    "description": c.description,
                    "location": c.location,
                }
                for c in self.items
            ],
            "caveats": self.caveats,
            "answer": self.answer,
            "error": self.error,
        }

    def transcript(self) -> dict[str, Any]:
        """Everything the run did, for `--transcript FILE` (every event, verbatim)."""
        return {**self.as_dict(), "events": [e.as_dict() for e in self.trace.events]}


def write_transcript(run: ReviewRun, path: str | Path) -> Path:
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(
            json.dumps(run.transcript(), ensure_ascii=False, indent=1, default=str),
            encoding="utf-8",
        )
    except OSError as exc:
        raise ConfigError(f"cannot write transcript {target}: {exc.strerror}") from exc
    return target
