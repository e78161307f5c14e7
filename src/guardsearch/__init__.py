"""guardsearch: LLM work as searches and loops steered by guard feedback.

The public API is this module (docs/api.md lists it): one entry point per family with
one call shape, their outcomes, and the vocabulary they share. The subpackages hold the
implementation and, for extending a layer, a few names of their own (e.g.
`guardsearch.search` for writing a search space or a strategy).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from guardsearch import registry
from guardsearch.otel import enable_from_env

# OpenTelemetry traces when the environment names an OTLP endpoint (docs/observability.md);
# otherwise nothing is imported for them.
enable_from_env()

if TYPE_CHECKING:
    from guardsearch._api import (
        run_app,
        run_app_sync,
        run_probe,
        run_probe_sync,
        run_research,
        run_research_sync,
        run_review,
        run_review_sync,
        run_search,
        run_search_sync,
    )
    from guardsearch.apps.probe import (
        ProbeConfig,
        ProbeRun,
    )
    from guardsearch.core.artifact import (
        Artifact,
    )
    from guardsearch.core.budget import (
        Budget,
        StepBudget,
        deadline,
        max_calls,
        max_cost,
        max_tokens,
    )
    from guardsearch.core.context import (
        Context,
    )
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
    from guardsearch.core.events import (
        Event,
        Trace,
    )
    from guardsearch.core.guard_result import (
        Check,
        GuardResult,
    )
    from guardsearch.core.messages import (
        Completion,
        Message,
        ModelRequest,
    )
    from guardsearch.core.outcome import (
        Outcome,
        StopReason,
    )
    from guardsearch.core.schedule import (
        Schedule,
    )
    from guardsearch.core.source import (
        Source,
    )
    from guardsearch.core.steering import (
        Steering,
    )
    from guardsearch.core.usage import (
        Usage,
    )
    from guardsearch.guards.base import (
        FunctionGuard,
        Guard,
        guard,
    )
    from guardsearch.guards.composite import (
        all_of,
        any_of,
        hard,
        majority,
        member,
        weighted,
    )
    from guardsearch.guards.diff import (
        make_patch,
    )
    from guardsearch.guards.evaluator import (
        Evaluator,
        RubricItem,
    )
    from guardsearch.guards.parse import (
        parse_json,
    )
    from guardsearch.guards.regex import (
        RegexGuard,
    )
    from guardsearch.guards.schema import (
        SchemaGuard,
    )
    from guardsearch.loops.inner_outer import (
        AdaptiveResult,
    )
    from guardsearch.loops.research import (
        ResearchConfig,
        ResearchRun,
    )
    from guardsearch.loops.review import (
        ReviewConfig,
        ReviewRun,
        ReviewTask,
    )
    from guardsearch.models.base import (
        Model,
        WrapperModel,
        allow_real_models,
    )
    from guardsearch.models.cache import (
        CachedModel,
        CompletionCache,
        DictCache,
    )
    from guardsearch.models.metered import (
        Metered,
    )
    from guardsearch.models.openai import (
        OpenAIModel,
    )
    from guardsearch.models.replay import (
        FileCache,
        ReplayModel,
    )
    from guardsearch.models.scripted import (
        ScriptedModel,
    )
    from guardsearch.models.spec import (
        model_from_spec,
    )
    from guardsearch.prompts import (
        PromptTemplate,
    )
    from guardsearch.registry import (
        App,
        AppSetup,
        register,
    )
    from guardsearch.search import (
        MoveSpace,
        SearchResult,
        SearchSpace,
        StepSpace,
    )
    from guardsearch.steps.step import (
        Step,
        StepOutcome,
        attempt_step,
        run_step,
        run_step_sync,
    )
    from guardsearch.tools.base import (
        SearchProvider,
    )

# Every name loads on first use (PEP 562), so that `import guardsearch` and the CLI's
# `--version` and `--help` stay quick (benchmarks/startup.py); the block above gives
# type checkers the same names. tests/unit/test_public_api.py checks the two agree.
_LAZY_MODULES: dict[str, tuple[str, ...]] = {
    "guardsearch._api": (
        "run_app",
        "run_app_sync",
        "run_probe",
        "run_probe_sync",
        "run_research",
        "run_research_sync",
        "run_review",
        "run_review_sync",
        "run_search",
        "run_search_sync",
    ),
    "guardsearch.apps.probe": (
        "ProbeConfig",
        "ProbeRun",
    ),
    "guardsearch.core.artifact": ("Artifact",),
    "guardsearch.core.budget": (
        "Budget",
        "deadline",
        "max_calls",
        "max_cost",
        "max_tokens",
        "StepBudget",
    ),
    "guardsearch.core.context": ("Context",),
    "guardsearch.core.errors": (
        "BudgetExceeded",
        "ConfigError",
        "GuardsearchError",
        "ModelError",
        "ParseError",
        "ReplayMiss",
        "RunError",
        "StepFailed",
        "StoreError",
    ),
    "guardsearch.core.events": (
        "Event",
        "Trace",
    ),
    "guardsearch.core.guard_result": (
        "Check",
        "GuardResult",
    ),
    "guardsearch.core.messages": (
        "Completion",
        "Message",
        "ModelRequest",
    ),
    "guardsearch.core.outcome": (
        "Outcome",
        "StopReason",
    ),
    "guardsearch.core.schedule": ("Schedule",),
    "guardsearch.core.source": ("Source",),
    "guardsearch.core.steering": ("Steering",),
    "guardsearch.core.usage": ("Usage",),
    "guardsearch.guards.base": (
        "FunctionGuard",
        "Guard",
        "guard",
    ),
    "guardsearch.guards.composite": (
        "all_of",
        "any_of",
        "hard",
        "majority",
        "member",
        "weighted",
    ),
    "guardsearch.guards.diff": ("make_patch",),
    "guardsearch.guards.evaluator": (
        "Evaluator",
        "RubricItem",
    ),
    "guardsearch.guards.parse": ("parse_json",),
    "guardsearch.guards.regex": ("RegexGuard",),
    "guardsearch.guards.schema": ("SchemaGuard",),
    "guardsearch.loops.inner_outer": ("AdaptiveResult",),
    "guardsearch.loops.research": (
        "ResearchConfig",
        "ResearchRun",
    ),
    "guardsearch.loops.review": (
        "ReviewConfig",
        "ReviewRun",
        "ReviewTask",
    ),
    "guardsearch.models.base": (
        "allow_real_models",
        "Model",
        "WrapperModel",
    ),
    "guardsearch.models.cache": (
        "CachedModel",
        "CompletionCache",
        "DictCache",
    ),
    "guardsearch.models.metered": ("Metered",),
    "guardsearch.models.openai": ("OpenAIModel",),
    "guardsearch.models.replay": (
        "FileCache",
        "ReplayModel",
    ),
    "guardsearch.models.scripted": ("ScriptedModel",),
    "guardsearch.models.spec": ("model_from_spec",),
    "guardsearch.prompts": ("PromptTemplate",),
    "guardsearch.registry": (
        "App",
        "AppSetup",
        "register",
    ),
    "guardsearch.search": (
        "MoveSpace",
        "SearchResult",
        "SearchSpace",
        "StepSpace",
    ),
    "guardsearch.steps.step": (
        "attempt_step",
        "run_step",
        "run_step_sync",
        "Step",
        "StepOutcome",
    ),
    "guardsearch.tools.base": ("SearchProvider",),
}
_LAZY = {name: module for module, names in _LAZY_MODULES.items() for name in names}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value: Any = _version()
    elif name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'guardsearch' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, "__version__"})


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("guardsearch")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0+local"


# The built-in apps register when first looked up (guardsearch.registry).
registry.builtin_apps("guardsearch.apps")

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
    "run_app",
    "run_app_sync",
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
