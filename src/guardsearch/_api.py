"""The entry points of the four families, one call shape: the input, then `model=`,
`budget=` (anything `Budget.of` takes), `trace=` and `config=`; each returns an Outcome
and has a `_sync` twin. `model` is a `Model` or a spec string ("embedded",
"openai:URL#MODEL", ...; docs/models.md). See docs/api.md.

    run_search(space, strategy, ...)  -> SearchResult   a guarded tree search
    run_research(task, ...)           -> ResearchRun    plan -> search -> reflect -> answer
    run_review(request, ...)          -> ReviewRun      plan -> act -> review -> refine
    run_probe(topic, ...)             -> ProbeRun       a model planner around a probe policy
    run_app(app, problem, ...)        -> SearchResult   a registered app by name (game24, ...)

The loops default to the offline corpus for what they read (research's `providers`,
review's `task`, probe's `index`); pass your own to read something else.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from guardsearch.apps.find import find
from guardsearch.apps.probe import ProbeConfig, ProbeRun, probe
from guardsearch.apps.solve import solve_app
from guardsearch.core.budget import BudgetLike
from guardsearch.core.errors import ConfigError
from guardsearch.core.events import Trace
from guardsearch.corpus.index import CorpusIndex
from guardsearch.loops.inner_outer.budget import DEFAULT_INNER_PROBES, DEFAULT_OUTER_CALLS
from guardsearch.loops.research import ResearchConfig, ResearchLoop, ResearchRun
from guardsearch.loops.review import RefinementHistory, ReviewConfig, ReviewRun, ReviewTask, review
from guardsearch.loops.review.config import DEFAULT_BUDGET_CALLS
from guardsearch.models.base import Model
from guardsearch.models.metered import Metered
from guardsearch.models.spec import model_from_spec
from guardsearch.registry import App
from guardsearch.search import SearchResult, SearchSpace, search
from guardsearch.sync import run_sync
from guardsearch.tools.base import SearchProvider


def _model(model: Model | str) -> Model:
    return model_from_spec(model) if isinstance(model, str) else model


def _search_config(config: Mapping[str, Any] | object | None) -> dict[str, Any]:
    """A search's `config=` as keywords: a mapping as it is, or a strategy's options
    class (`AStarOptions(rmax=8)`, `EngineOptions(samples=2)`) as the fields it sets
    away from their defaults (so an app's recommended options stay where it is silent)."""
    if config is None:
        return {}
    if isinstance(config, Mapping):
        return dict(config)
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        return {
            f.name: getattr(config, f.name)
            for f in dataclasses.fields(config)
            if getattr(config, f.name) != _default(f)
        }
    raise ConfigError(
        f"config must be a mapping or a strategy's options class, not {type(config).__name__}"
    )


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return dataclasses.MISSING


async def run_search(
    space: SearchSpace,
    strategy: str = "dfs",
    *,
    model: Model | Metered | str,
    budget: BudgetLike = None,
    trace: Trace | None = None,
    config: Mapping[str, Any] | object | None = None,
    **options: Any,
) -> SearchResult:
    """Search `space` with the named strategy (dfs, bfs, beam, astar, best_first,
    consensus, refine) within `budget` (None: unlimited).

    `config` holds the engine's and the strategy's options (`samples`, `width`, `rmax`,
    ...; docs/search.md): a mapping, or the strategy's options class
    (`AStarOptions(rmax=8)`, `guardsearch.search`); keywords given here override it.
    This is `search()` of `guardsearch.search`, which also resumes saved states and
    checkpoints.
    """
    backend = model if isinstance(model, Metered) else _model(model)
    options = {**_search_config(config), **options}
    return await search(space, strategy, model=backend, budget=budget, trace=trace, **options)


async def run_research(
    task: str,
    *,
    model: Model | str,
    budget: BudgetLike = None,
    trace: Trace | None = None,
    config: ResearchConfig | None = None,
    providers: Sequence[SearchProvider] | None = None,
) -> ResearchRun:
    """Research `task`: plan queries, search, reflect, iterate, then answer with
    verified citations; see docs/research.md.

    `budget` None is the research default (40,000 tokens, 120 s of loop time, or the
    `RESEARCH_*` environment variables); `config` None reads the environment too.
    `providers` are searched in fallback order (default: the offline corpus).
    """
    if providers is None:
        from guardsearch.tools.corpus_search import CorpusProvider

        providers = [CorpusProvider()]
    loop = ResearchLoop(_model(model), providers, config or ResearchConfig.from_env())
    return await loop.run(task, budget=budget, trace=trace)


async def run_review(
    request: str,
    *,
    model: Model | str,
    budget: BudgetLike = DEFAULT_BUDGET_CALLS,
    trace: Trace | None = None,
    config: ReviewConfig | None = None,
    task: ReviewTask[Any] | None = None,
    provider: SearchProvider | None = None,
    history: str | Path | RefinementHistory | None = None,
) -> ReviewRun:
    """Plan, act, review and refine until the verified items meet the domain's quality
    threshold (`config.min_items` of them); see docs/review.md.

    `task` plans, acts and verifies (default: the find app, items of one type matching
    a condition, over `provider`, by default the offline corpus). `history` is what
    earlier runs learned about refinements: a JSON file or a shared `RefinementHistory`.
    """
    config = config or ReviewConfig()
    if task is None:
        return await find(
            request,
            model=_model(model),
            provider=provider,
            budget=budget,
            min_items=config.min_items,
            config=config,
            trace=trace,
            history=history,
        )
    return await review(
        request,
        task,
        model=_model(model),
        budget=budget,
        trace=trace,
        config=config,
        history=history,
    )


async def run_probe(
    topic: str,
    *,
    model: Model | str,
    budget: BudgetLike = DEFAULT_OUTER_CALLS,
    trace: Trace | None = None,
    config: ProbeConfig | None = None,
    index: CorpusIndex | None = None,
    inner_budget: BudgetLike = DEFAULT_INNER_PROBES,
) -> ProbeRun:
    """Search a corpus for `topic` with the inner/outer loop: the model plans and
    evaluates within `budget`, a deterministic probe policy searches within
    `inner_budget` probe calls; see docs/probe.md.

    `config` picks the baseline (one model-written query) instead, the number of
    results and the policy's settings. `index` is the corpus (default: the offline one).
    """
    config = config or ProbeConfig()
    return await probe(
        topic,
        model=_model(model),
        index=index,
        baseline=config.baseline,
        budget=budget,
        inner_budget=inner_budget,
        settings=config.settings,
        trace=trace,
        max_results=config.max_results,
    )


async def run_app(
    app: App | str,
    problem: Mapping[str, Any],
    *,
    model: Model | Metered | str,
    budget: BudgetLike = None,
    trace: Trace | None = None,
    config: Mapping[str, Any] | object | None = None,
    strategy: str | None = None,
) -> SearchResult:
    """Solve `problem` (the app's problem object, e.g. `{"numbers": "4 5 6 10"}`) with
    the registered app `app` (a name, an import path `pkg.module:APP`, or an `App`):
    its space, its default strategy and the options it recommends, under `config`
    (search options, as `run_search` takes them); see docs/api.md.

    `budget` None is the app's default (40 calls). A ConfigError says the app is unknown
    or cannot read the problem; a RunError that a solved answer failed the app's check.
    """
    backend = model if isinstance(model, Metered) else _model(model)
    extra: dict[str, Any] = {} if budget is None else {"budget": budget}
    return await solve_app(app, problem, strategy=strategy, model=backend, trace=trace,
                           config=_search_config(config), **extra)  # fmt: skip


run_search_sync = run_sync(run_search)
run_research_sync = run_sync(run_research)
run_review_sync = run_sync(run_review)
run_probe_sync = run_sync(run_probe)
run_app_sync = run_sync(run_app)

# No `__all__` here: the root package's lazy table (`_LAZY_MODULES` in
# guardsearch/__init__.py) is the one list of these entry points, and
# tests/unit/test_public_api.py checks it names every one this module defines.
