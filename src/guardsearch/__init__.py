"""guardsearch: LLM work as searches and loops steered by guard feedback.

The public API is this module (docs/api.md lists it): one entry point per family with
one call shape, their outcomes, and the vocabulary they share. The subpackages hold the
implementation and, for extending a layer, a few names of their own (e.g.
`guardsearch.search` for writing a search space or a strategy).
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from guardsearch import registry
from guardsearch.core.artifact import Artifact
from guardsearch.core.budget import Budget, StepBudget, deadline, max_calls, max_cost, max_tokens
from guardsearch.core.context import Context
from guardsearch.core.errors import (
    BudgetExceeded,
    ConfigError,
    GuardsearchError,
    ModelError,
    ParseError,
    ReplayMiss,
    RunError,
    StepFailed,
    StoreError,
)
from guardsearch.core.events import Event, Trace
from guardsearch.core.guard_result import Check, GuardResult
from guardsearch.core.messages import Completion, Message, ModelRequest
from guardsearch.core.outcome import Outcome, StopReason
from guardsearch.core.schedule import Schedule
from guardsearch.core.source import Source
from guardsearch.core.steering import Steering
from guardsearch.core.usage import Usage
from guardsearch.guards.base import FunctionGuard, Guard, guard
from guardsearch.guards.composite import all_of, any_of, hard, majority, member, weighted
from guardsearch.guards.diff import make_patch
from guardsearch.guards.evaluator import Evaluator, RubricItem
from guardsearch.guards.parse import parse_json
from guardsearch.guards.regex import RegexGuard
from guardsearch.guards.schema import SchemaGuard
from guardsearch.models.base import Model, WrapperModel, allow_real_models
from guardsearch.models.cache import CachedModel, CompletionCache, DictCache
from guardsearch.models.metered import Metered
from guardsearch.models.openai import OpenAIModel
from guardsearch.models.replay import FileCache, ReplayModel
from guardsearch.models.scripted import ScriptedModel
from guardsearch.models.spec import model_from_spec
from guardsearch.otel import enable_from_env
from guardsearch.prompts import PromptTemplate
from guardsearch.registry import App, AppSetup, register
from guardsearch.search import MoveSpace, SearchResult, SearchSpace, StepSpace
from guardsearch.steps.step import Step, StepOutcome, attempt_step, run_step
from guardsearch.sync import run_sync
from guardsearch.tools.base import SearchProvider

# OpenTelemetry traces when the environment names an OTLP endpoint (docs/observability.md);
# otherwise nothing is imported for them.
enable_from_env()

if TYPE_CHECKING:
    from guardsearch._api import (
        run_probe,
        run_probe_sync,
        run_research,
        run_research_sync,
        run_review,
        run_review_sync,
        run_search,
        run_search_sync,
    )
    from guardsearch.apps.probe import ProbeConfig, ProbeRun
    from guardsearch.apps.solve import solve_app, solve_app_sync
    from guardsearch.loops.inner_outer import AdaptiveResult
    from guardsearch.loops.research import ResearchConfig, ResearchRun
    from guardsearch.loops.review import ReviewConfig, ReviewRun, ReviewTask

# The loop families load on first use, so that `import guardsearch` (and the CLI) stays quick.
_LAZY_MODULES = {
    "guardsearch._api": (
        *("run_search", "run_research", "run_review", "run_probe"),
        *("run_search_sync", "run_research_sync", "run_review_sync", "run_probe_sync"),
    ),
    "guardsearch.loops.research": ("ResearchConfig", "ResearchRun"),
    "guardsearch.loops.review": ("ReviewConfig", "ReviewRun", "ReviewTask"),
    "guardsearch.loops.inner_outer": ("AdaptiveResult",),
    "guardsearch.apps.probe": ("ProbeConfig", "ProbeRun"),
    "guardsearch.apps.solve": ("solve_app", "solve_app_sync"),
}
_LAZY = {name: module for module, names in _LAZY_MODULES.items() for name in names}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'guardsearch' has no attribute {name!r}")
    value = getattr(import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


# The built-in apps register when first looked up (guardsearch.registry).
registry.builtin_apps("guardsearch.apps")

run_step_sync = run_sync(run_step)

try:
    __version__ = version("guardsearch")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+local"

# Grouped as docs/api.md lists them, not sorted.
__all__ = [  # noqa: RUF022
    # The families: input, model=, budget=, trace=, config= -> an Outcome.
    "run_search",
    "run_search_sync",
    "run_research",
    "run_research_sync",
    "run_review",
    "run_review_sync",
    "run_probe",
    "run_probe_sync",
    "solve_app",
    "solve_app_sync",
    # ... their outcomes and what configures them.
    "Outcome",
    "StopReason",
    "SearchResult",
    "ResearchRun",
    "ReviewRun",
    "AdaptiveResult",
    "ProbeRun",
    "SearchSpace",
    "StepSpace",
    "MoveSpace",
    "ResearchConfig",
    "SearchProvider",
    "ReviewConfig",
    "ReviewTask",
    "ProbeConfig",
    # One guarded step: prompt -> model -> parse -> guard -> retry.
    "Step",
    "StepOutcome",
    "run_step",
    "run_step_sync",
    "attempt_step",
    "Context",
    "Artifact",
    "PromptTemplate",
    # Guards.
    "Guard",
    "GuardResult",
    "Check",
    "FunctionGuard",
    "RegexGuard",
    "SchemaGuard",
    "Evaluator",
    "RubricItem",
    "guard",
    "all_of",
    "any_of",
    "majority",
    "weighted",
    "hard",
    "member",
    "parse_json",
    "make_patch",
    # Steering: how attempts diversify, what the verdicts changed.
    "Schedule",
    "Steering",
    # Budgets.
    "Budget",
    "StepBudget",
    "max_calls",
    "max_tokens",
    "max_cost",
    "deadline",
    # Models and their wrappers.
    "Model",
    "ModelRequest",
    "Message",
    "Completion",
    "model_from_spec",
    "allow_real_models",
    "OpenAIModel",
    "ScriptedModel",
    "ReplayModel",
    "WrapperModel",
    "Metered",
    "CachedModel",
    "CompletionCache",
    "DictCache",
    "FileCache",
    # What runs record and retrieve.
    "Trace",
    "Event",
    "Usage",
    "Source",
    # Apps by name (guardsearch apps, POST /solve, durable runs, bench).
    "App",
    "AppSetup",
    "register",
    # Errors: a user mistake (ConfigError) or a run that failed (RunError).
    "GuardsearchError",
    "ConfigError",
    "RunError",
    "BudgetExceeded",
    "StepFailed",
    "ModelError",
    "ParseError",
    "ReplayMiss",
    "StoreError",
    "__version__",
]
