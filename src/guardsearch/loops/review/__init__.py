"""The plan/act/review loop: reflection, quality reports, refine and retry
(docs/review.md).

`guardsearch.run_review` is its entry point; `review()` runs your own `ReviewTask`,
and this package exports what writing one takes. Anything else is imported from its
module.
"""

from guardsearch.loops.review.config import ReviewConfig
from guardsearch.loops.review.escalation import Escalation
from guardsearch.loops.review.history import RefinementHistory
from guardsearch.loops.review.history_file import load_history, save_history
from guardsearch.loops.review.loop import ReviewLoop, review
from guardsearch.loops.review.quality import Level, QualityReport, Refinement, Verdict
from guardsearch.loops.review.reflection import Reflection
from guardsearch.loops.review.run import ReviewRun, write_transcript
from guardsearch.loops.review.task import Planned, ReviewTask
from guardsearch.loops.review.thresholds import DomainThresholds

__all__ = [
    "DomainThresholds",
    "Escalation",
    "Level",
    "Planned",
    "QualityReport",
    "Refinement",
    "RefinementHistory",
    "Reflection",
    "ReviewConfig",
    "ReviewLoop",
    "ReviewRun",
    "ReviewTask",
    "Verdict",
    "load_history",
    "review",
    "save_history",
    "write_transcript",
]
