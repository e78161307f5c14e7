"""How runs end: one set of stop reasons shared by every family, and the one mapping
from an error to its stop reason.

Each family adds its own reasons for what only it knows (a search whose every branch
was pruned, a research loop whose reflection was sufficient, a review whose quality met
the threshold); what any run can run into has one name here.
"""

from __future__ import annotations

import uuid
from typing import Final, Literal

from guardsearch.core.errors import (
    BudgetExceeded,
    ConfigError,
    ModelError,
    RunError,
    StepFailed,
)

StopReason = Literal[
    "success",
    "budget_exhausted",
    "deadline",
    "max_iterations",
    "cancelled",
    "step_failed",
    "model_error",
    "run_error",
    "invalid_request",
    "internal_error",
]
CORE_STOP_REASONS: Final[frozenset[str]] = frozenset(StopReason.__args__)  # type: ignore[attr-defined]


def stop_reason_for(error: BaseException) -> StopReason:
    """The stop reason of a run that `error` ended (the only such mapping)."""
    if isinstance(error, BudgetExceeded):
        return "deadline" if error.timed_out else "budget_exhausted"
    if isinstance(error, StepFailed):
        return "step_failed"
    if isinstance(error, ModelError):
        return "model_error"
    if isinstance(error, RunError):
        return "run_error"
    if isinstance(error, ConfigError):
        return "invalid_request"
    return "internal_error"


def new_run_id() -> str:
    """A run id: 16 hex digits (every family's run ids are strings of this form)."""
    return uuid.uuid4().hex[:16]
