"""The plan/act/review loop (seed 002): reflection, quality reports, refine and retry."""

from guardsearch.loops.review.config import ReviewConfig
from guardsearch.loops.review.escalation import Escalation
from guardsearch.loops.review.history import RefinementHistory, RefinementRecord
from guardsearch.loops.review.history_file import load_history, save_history
from guardsearch.loops.review.loop import ReviewLoop, compose_answer, review
from guardsearch.loops.review.quality import (
    LEVELS,
    Level,
    QualityReport,
    Refinement,
    Verdict,
    quality_report,
)
from guardsearch.loops.review.reflection import Reflection
from guardsearch.loops.review.run import AttemptRecord, ReviewRun, write_transcript
from guardsearch.loops.review.task import Planned, ReviewTask
from guardsearch.loops.review.thresholds import DEFAULT_THRESHOLDS, DomainThresholds

__all__ = [
    "DEFAULT_THRESHOLDS",
    "LEVELS",
    "AttemptRecord",
    "DomainThresholds",
    "Escalation",
    "Level",
    "Planned",
    "QualityReport",
    "Refinement",
    "RefinementHistory",
    "RefinementRecord",
    "Reflection",
    "ReviewConfig",
    "ReviewLoop",
    "ReviewRun",
    "ReviewTask",
    "Verdict",
    "compose_answer",
    "load_history",
    "quality_report",
    "review",
    "save_history",
    "write_transcript",
]
