"""guardsearch: LLM work as searches and loops steered by guard feedback.

The public API lives here; everything else is an implementation detail.
"""

from importlib.metadata import PackageNotFoundError, version

from guardsearch import registry
from guardsearch.core import (
    Artifact,
    Budget,
    BudgetExceeded,
    Check,
    Completion,
    ConfigError,
    Context,
    Event,
    GuardResult,
    GuardsearchError,
    Message,
    ModelError,
    ModelRequest,
    ParseError,
    RunError,
    StepBudget,
    StepFailed,
    Trace,
    Usage,
    deadline,
    max_calls,
    max_cost,
    max_tokens,
    stable_digest,
)
from guardsearch.guards import (
    Evaluator,
    FunctionGuard,
    Guard,
    RegexGuard,
    SchemaGuard,
    all_of,
    any_of,
    guard,
    hard,
    majority,
    member,
    parse_json,
    weighted,
)
from guardsearch.models import (
    Metered,
    Model,
    OpenAIModel,
    ReplayModel,
    ScriptedModel,
    allow_real_models,
    model_from_spec,
)
from guardsearch.prompts import PromptTemplate
from guardsearch.search import SearchResult, StepSpace, search, search_sync
from guardsearch.steps import Step, StepOutcome, attempt_step, run_step
from guardsearch.sync import run_sync

# The built-in apps register when first looked up (guardsearch.registry).
registry.builtin_apps("guardsearch.apps")

run_step_sync = run_sync(run_step)

try:
    __version__ = version("guardsearch")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+local"

__all__ = [
    "Artifact",
    "Budget",
    "BudgetExceeded",
    "Check",
    "Completion",
    "ConfigError",
    "Context",
    "Evaluator",
    "Event",
    "FunctionGuard",
    "Guard",
    "GuardResult",
    "GuardsearchError",
    "Message",
    "Metered",
    "Model",
    "ModelError",
    "ModelRequest",
    "OpenAIModel",
    "ParseError",
    "PromptTemplate",
    "RegexGuard",
    "ReplayModel",
    "RunError",
    "SchemaGuard",
    "ScriptedModel",
    "SearchResult",
    "Step",
    "StepBudget",
    "StepFailed",
    "StepOutcome",
    "StepSpace",
    "Trace",
    "Usage",
    "__version__",
    "all_of",
    "allow_real_models",
    "any_of",
    "attempt_step",
    "deadline",
    "guard",
    "hard",
    "majority",
    "max_calls",
    "max_cost",
    "max_tokens",
    "member",
    "model_from_spec",
    "parse_json",
    "run_step",
    "run_step_sync",
    "search",
    "search_sync",
    "stable_digest",
    "weighted",
]
