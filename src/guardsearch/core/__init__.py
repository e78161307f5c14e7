"""Pure types with no I/O: contexts, artifacts, verdicts, budgets, events, sources, errors."""

from guardsearch.core.artifact import Artifact
from guardsearch.core.budget import (
    Allowance,
    Budget,
    BudgetLike,
    BudgetState,
    Limit,
    Reservation,
    StepBudget,
    deadline,
    max_calls,
    max_cost,
    max_tokens,
)
from guardsearch.core.context import Context
from guardsearch.core.digest import canonical_json, stable_digest
from guardsearch.core.errors import (
    BudgetExceeded,
    ConfigError,
    GuardsearchError,
    ModelError,
    ParseError,
    ReplayMiss,
    RunError,
    StepFailed,
)
from guardsearch.core.events import Event, EventKind, Trace
from guardsearch.core.guard_result import Check, GuardResult
from guardsearch.core.messages import Completion, Message, ModelRequest
from guardsearch.core.source import Source
from guardsearch.core.usage import Usage

__all__ = [
    "Allowance",
    "Artifact",
    "Budget",
    "BudgetExceeded",
    "BudgetLike",
    "BudgetState",
    "Check",
    "Completion",
    "ConfigError",
    "Context",
    "Event",
    "EventKind",
    "GuardResult",
    "GuardsearchError",
    "Limit",
    "Message",
    "ModelError",
    "ModelRequest",
    "ParseError",
    "ReplayMiss",
    "Reservation",
    "RunError",
    "Source",
    "StepBudget",
    "StepFailed",
    "Trace",
    "Usage",
    "canonical_json",
    "deadline",
    "max_calls",
    "max_cost",
    "max_tokens",
    "stable_digest",
]
