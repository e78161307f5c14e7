"""What every run returns: the `Outcome` base, one set of stop reasons shared by every
family, and the one mapping from an error to its stop reason.

`SearchResult`, `ResearchRun`, `ReviewRun`, `AdaptiveResult` and `ProbeRun` are
Outcomes: each says whether it succeeded, why it stopped, what it used, how long it
took, its run id and its trace, and serialises them one way (`as_dict`). Each family
adds its own stop reasons for what only it knows (a search whose every branch was
pruned, a research loop whose reflection was sufficient, a review whose quality met
the threshold); what any run can run into has one name here.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from guardsearch.core.errors import (
    BudgetExceeded,
    ConfigError,
    ModelError,
    RunError,
    StepFailed,
    StoreError,
)
from guardsearch.core.events import Trace
from guardsearch.core.model_usage import model_usage
from guardsearch.core.steering import Steering
from guardsearch.core.usage import Usage

StopReason = Literal[
    "success",
    "budget_exhausted",
    "deadline",
    "max_iterations",
    "cancelled",
    "step_failed",
    "model_error",
    "store_error",
    "run_error",
    "invalid_request",
    "internal_error",
]
CORE_STOP_REASONS: Final[frozenset[str]] = frozenset(StopReason.__args__)  # type: ignore[attr-defined]


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """How one run ended, whatever the family: the base of every result type.

    `stop_reason` is one of `CORE_STOP_REASONS` or one of the family's own; `usage` is
    what the run's model calls cost; `seconds` its wall time; `trace` its events.
    """

    succeeded: bool
    stop_reason: str
    usage: Usage
    seconds: float
    run_id: str
    trace: Trace = field(repr=False, compare=False)

    @property
    def steering(self) -> Steering:
        """How the guards' feedback steered the run: outputs, repeats, repairs and
        failures prevented by constraints (core/steering.py), from its trace."""
        return Steering.from_events(self.trace.events)

    @property
    def models(self) -> dict[str, dict[str, Any]]:
        """Usage per model when the run's model was a ladder (`core.model_usage`), else {}."""
        return model_usage(self.trace.events)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: the shared fields, then the family's (`details`).

        A run on a model ladder adds `models`: usage, seconds and escalations per model.
        """
        models = self.models
        return {
            "succeeded": self.succeeded,
            "stop_reason": self.stop_reason,
            "run_id": self.run_id,
            "usage": self.usage.as_dict(),
            "seconds": round(self.seconds, 3),
            "steering": self.steering.as_dict(),
            **({"models": models} if models else {}),
            **self.details(),
        }

    def details(self) -> dict[str, Any]:
        """The family's own fields for `as_dict` (JSON-ready)."""
        return {}


def stop_reason_for(error: BaseException) -> StopReason:
    """The stop reason of a run that `error` ended (the only such mapping)."""
    if isinstance(error, BudgetExceeded):
        return "deadline" if error.timed_out else "budget_exhausted"
    if isinstance(error, StepFailed):
        return "step_failed"
    if isinstance(error, ModelError):
        return "model_error"
    if isinstance(error, StoreError):
        return "store_error"
    if isinstance(error, RunError):
        return "run_error"
    if isinstance(error, ConfigError):
        return "invalid_request"
    return "internal_error"


def new_run_id() -> str:
    """A run id, the one form for every run: a search's, a loop's, a durable run's in
    the store and an HTTP request's: `run-` and 12 hex digits (`run-3f9c2a1b7d4e`)."""
    return f"run-{uuid.uuid4().hex[:12]}"
