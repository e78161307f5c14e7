"""plan_problem: run one pipeline on one planning problem (the CLI's `plan` wraps it).

A *free task* (`problem=None`, `task="..."`) runs the same pipeline on the task's text
alone; with no initial state, goal or actions it is judged by what the task asks: its
spec (task_spec.py: constraints, kind, stated order), extracted from the text by code
(task_extract.py) or given (`spec=`), checked by the step guards and the task plan guard
(`guard_level` "task"; "minimal" runs the Minimal plan guard alone; medium or expansive
is a ConfigError). The result says which level ran and carries the spec.
"""

from __future__ import annotations

import time
from typing import Any

from guardsearch.apps.plan.free_search import free_search
from guardsearch.apps.plan.guards import LEVELS
from guardsearch.apps.plan.pipelines import Pipeline, get_pipeline
from guardsearch.apps.plan.problems import PlanProblem, get_problem
from guardsearch.apps.plan.report import result_dict
from guardsearch.apps.plan.space import FREE_TASK_NOTE, MINIMAL_NOTE, PlanSpace
from guardsearch.apps.plan.task_extract import extract_spec
from guardsearch.apps.plan.task_model_spec import model_spec
from guardsearch.apps.plan.task_spec import TaskSpec
from guardsearch.apps.plan.traces import MAX_EXPLORATIONS
from guardsearch.core.budget import BudgetLike
from guardsearch.core.errors import ConfigError
from guardsearch.core.events import Trace
from guardsearch.models.base import Model
from guardsearch.models.metered import Metered
from guardsearch.models.spec import model_from_spec
from guardsearch.search.heuristic import Heuristic
from guardsearch.search.result import SearchResult
from guardsearch.search.run import search
from guardsearch.sync import run_sync

DEFAULT_PIPELINE = "search"
DEFAULT_BUDGET_CALLS = 30
DEFAULT_GUARD_LEVEL = "expansive"
# The search's base temperature. Attempt k at a node samples by the engine's Schedule
# (default: greedy first, then 0.7, then 1.0, each with a fresh seed), so a retry or a
# regeneration after a backtrack gets a different answer instead of the greedy one again
# (which dedup would drop), and the run still replays.
DEFAULT_TEMPERATURE = 0.0


FREE_LEVELS = ("task", "minimal")
EXTRACTORS = ("code", "model")


def resolve_guard_level(problem: PlanProblem | None, guard_level: str | None) -> str:
    """The plan guard level that runs: the one asked for (default expansive) for a
    problem; for a free task, which has no facts or actions for the others to judge by,
    `task` (its spec; the default) or `minimal`."""
    if guard_level is not None and guard_level not in (*LEVELS, "task"):
        raise ConfigError(
            f"unknown guard level {guard_level!r}; choose one of {', '.join(LEVELS)} "
            "(a free task: task or minimal)"
        )
    if problem is not None:
        if guard_level == "task":
            raise ConfigError("guard level 'task' is for a free task; a problem has its own")
        return guard_level or DEFAULT_GUARD_LEVEL
    if guard_level not in (None, *FREE_LEVELS):
        raise ConfigError(
            f"guard level {guard_level!r} needs a problem's initial state, goal and actions; "
            "a free task is judged by its spec (task) or the minimal guard (or give "
            "--problem ID or --problem-file FILE)"
        )
    return guard_level or "task"


def task_spec_for(
    problem: PlanProblem | None, task: str | None, spec: TaskSpec | None
) -> TaskSpec | None:
    """The spec a free task is judged by: the one given, else what code reads from its
    text; None for a problem."""
    if problem is not None:
        if spec is not None:
            raise ConfigError("a spec is for a free task; a problem has its own facts")
        return None
    if spec is not None:
        return spec if spec.task else spec.model_copy(update={"task": task or ""})
    return extract_spec(task) if task and task.strip() else None


def plan_space(
    problem: PlanProblem | None,
    pipeline: Pipeline,
    *,
    task: str | None = None,
    guard_level: str | None = None,
    window: int | None = None,
    max_explorations: int = MAX_EXPLORATIONS,
    structural_repairs: bool = True,
    spec: TaskSpec | None = None,
) -> PlanSpace:
    """The space `pipeline` searches for `problem` (None: the free task `task`, judged by
    `spec`, by default the one code reads from its text)."""
    if problem is None and not (task and task.strip()):
        raise ConfigError("a free task needs its text (task=...), or give a problem")
    return PlanSpace.build(
        problem,
        pipeline.steps,
        guard_level=resolve_guard_level(problem, guard_level),
        task=task,
        budgets=pipeline.budgets(),
        window=window,
        max_explorations=max_explorations,
        structural_repairs=structural_repairs,
        spec=task_spec_for(problem, task, spec),
    )


async def plan_search(
    problem: PlanProblem | None,
    *,
    pipeline: str = DEFAULT_PIPELINE,
    model: Model | Metered,
    budget: BudgetLike = None,
    trace: Trace | None = None,
    task: str | None = None,
    guard_level: str | None = None,
    heuristic: str | Heuristic | None = None,
    window: int | None = None,
    max_explorations: int = MAX_EXPLORATIONS,
    structural_repairs: bool = True,
    spec: TaskSpec | None = None,
    **options: Any,
) -> SearchResult:
    """Run `pipeline` on `problem` (None: the free task `task`); the SearchResult
    (tree, trace, usage) for analysis. `structural_repairs=False`: a dead end, an
    over-budget plan, a step that can never run or steps left out of the strategy's
    order get feedback but no patch (guards.py)."""
    chosen = get_pipeline(pipeline)
    options.setdefault("temperature", DEFAULT_TEMPERATURE)
    space = plan_space(
        problem,
        chosen,
        task=task,
        guard_level=guard_level,
        window=window,
        max_explorations=max_explorations,
        structural_repairs=structural_repairs,
        spec=spec,
    )
    return await search(
        space,
        "dfs",
        model=model,
        budget=budget,
        trace=trace,
        heuristic=chosen.heuristic_for(heuristic, problem),
        **options,
    )


async def plan_problem(
    problem: PlanProblem | str | None,
    *,
    task: str | None = None,
    pipeline: str = DEFAULT_PIPELINE,
    model: Model | Metered | str | None = None,
    budget: BudgetLike = DEFAULT_BUDGET_CALLS,
    guard_level: str | None = None,
    heuristic: str | Heuristic | None = None,
    trace: Trace | None = None,
    spec: TaskSpec | None = None,
    extract: str = "code",
    **options: Any,
) -> dict[str, Any]:
    """Plan for a shipped problem (by id), a `PlanProblem`, or a free task (`problem=None`
    and `task="..."`); returns a JSON-ready dict.

    Keys: `problem` (None for a free task), `category`, `task`, `pipeline`,
    `guard_level` (the plan guard that ran), `guard_note` (why, for a free task),
    `spec` (a free task's, else None: read by code, or with `extract="model"` also by
    one guarded model call, task_model_spec.py; `spec_calls` says how many),
    `succeeded` (the plan passed every guard),
    `termination`, `plan` (the winning plan, else the best plan judged, or None),
    `verdicts` (that plan's checks: passed, failed and why), `path` (the winning or best
    failed path), `calls`, `tokens`, `backtracks` (each with from/to step, depth, reason
    and rule), `tree` (every node with step, attempt, passed, feedback), `seconds`,
    `model`.
    """
    the_problem = get_problem(problem) if isinstance(problem, str) else problem
    level = resolve_guard_level(the_problem, guard_level)
    the_spec = task_spec_for(the_problem, task, spec)
    if extract not in EXTRACTORS:
        raise ConfigError(f"unknown extract {extract!r}; choose one of {', '.join(EXTRACTORS)}")
    the_model = model_from_spec(model) if model is None or isinstance(model, str) else model
    started = time.perf_counter()
    spec_calls = 0
    if extract == "model" and the_spec is not None and spec is None:
        the_spec, spec_calls = await model_spec(the_spec, the_model)
    metered = isinstance(the_model, Metered)
    if the_problem is None and pipeline == "search" and level == "task" and task:
        # A free task's search: the single-shot plan as its root, then refinements of
        # the best plan (free_search.py).
        options.setdefault("temperature", DEFAULT_TEMPERATURE)
        payload = await free_search(
            task,
            the_spec,
            model=the_model,
            budget=None if metered else budget,
            trace=None if metered else trace,
            **options,
        )
    else:
        result = await plan_search(
            the_problem,
            pipeline=pipeline,
            model=the_model,
            budget=None if metered else budget,
            trace=None if metered else trace,
            task=task,
            guard_level=level,
            heuristic=heuristic,
            spec=the_spec,
            **options,
        )
        payload = result_dict(result)
    note = None if the_problem else (FREE_TASK_NOTE if level == "task" else MINIMAL_NOTE)
    return {
        "problem": the_problem.id if the_problem else None,
        "category": the_problem.category if the_problem else None,
        "task": task,
        "pipeline": pipeline,
        "guard_level": level,
        "guard_note": note,
        "spec": the_spec.as_json() if the_spec is not None else None,
        **payload,
        "calls": payload["calls"] + spec_calls,
        "spec_calls": spec_calls,
        "seconds": round(time.perf_counter() - started, 3),
        "model": the_model.name,
    }


plan_problem_sync = run_sync(plan_problem)
