"""The plan pipelines as a registered app: durable runs, POST /solve and `bench` find it by name."""

from __future__ import annotations

from typing import Any

from guardsearch.apps.plan.pipelines import get_pipeline
from guardsearch.apps.plan.problems import get_problem
from guardsearch.apps.plan.solve import DEFAULT_PIPELINE, DEFAULT_TEMPERATURE, plan_space
from guardsearch.core.errors import ConfigError
from guardsearch.registry import App, AppSetup, register

PROBLEM_KEYS = ("problem", "task", "pipeline", "guard_level", "heuristic")


def _text(problem: dict[str, Any], key: str) -> str | None:
    value = problem.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"plan: {key!r} must be a string, got {value!r}")
    return value


def build(problem: dict[str, Any], strategy: str) -> AppSetup:
    """`{"problem": ID}` (a shipped problem) or `{"task": "..."}` (a free task) as a space.

    Optional: `pipeline` (default `search`), `guard_level`, and `heuristic` (fixes |
    rules | model | blind: where dfs backtracks to). Only shipped problems, never a file, so a
    request to POST /solve cannot make the server read one.
    """
    unknown = sorted(set(problem) - set(PROBLEM_KEYS))
    if unknown:
        raise ConfigError(f"plan: unknown keys {unknown}; use {', '.join(PROBLEM_KEYS)}")
    ident = _text(problem, "problem")
    pipeline = get_pipeline(_text(problem, "pipeline") or DEFAULT_PIPELINE)
    the_problem = get_problem(ident) if ident else None
    space = plan_space(
        the_problem,
        pipeline,
        task=_text(problem, "task"),
        guard_level=_text(problem, "guard_level"),
    )
    # As plan_search: seeded sampling, and the pipeline's heuristic for dfs.
    options: dict[str, Any] = {"temperature": DEFAULT_TEMPERATURE}
    if strategy == "dfs":
        options["heuristic"] = pipeline.heuristic_for(_text(problem, "heuristic"), the_problem)
    return AppSetup(space=space, options=options)


def _suite() -> object:
    from guardsearch.apps.plan.suite import suite

    return suite


APP = register(
    App(
        name="plan",
        build=build,
        summary="Plan a task as analysis -> recon -> strategy -> plan, backtracking on feedback",
        strategy="dfs",
        example={"problem": "bug-login-empty-password"},
        suite=_suite,
        command="guardsearch plan --problem bug-login-empty-password",
    )
)
