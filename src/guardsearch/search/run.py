"""`search()`: the same call for every strategy, and the loop that drives it.

    result = await search(space, strategy="astar", model=model, budget=30)

The driver owns what no strategy should repeat: building the root, the run's shell
(the run kernel, kernel.py, as every loop has: the run id, the budget and trace through
`Metered`, the clock, `run_start` and `run_end`), making the search's model the one
model-backed guards use,
cooperative cancellation, turning `BudgetExceeded` into `budget_exhausted`, calling
`on_expansion(state)` after every step that expanded or set `state.checkpoint_due`
(where a durable store plugs in), resuming from a saved state, and assembling the
`SearchResult`.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any

from guardsearch.core.budget import Budget, BudgetLike
from guardsearch.core.digest import stable_digest
from guardsearch.core.errors import BudgetExceeded, ConfigError
from guardsearch.core.events import Trace
from guardsearch.core.outcome import stop_reason_for
from guardsearch.core.steering import Steering
from guardsearch.core.usage import ZERO
from guardsearch.guards.evaluator import using_model
from guardsearch.kernel import Kernel
from guardsearch.models.base import Model
from guardsearch.models.metered import Metered
from guardsearch.search.expand import Checkpoint, Engine, EngineOptions
from guardsearch.search.node import Node, SearchTree
from guardsearch.search.result import SearchResult, result_of
from guardsearch.search.space import SearchSpace
from guardsearch.search.state import SearchState, Termination
from guardsearch.search.strategies.base import Strategy, get_strategy, option_names
from guardsearch.sync import run_sync

_ENGINE_OPTIONS = option_names(EngineOptions)


def split_options(strategy: Strategy, options: dict[str, Any]) -> tuple[EngineOptions, Any]:
    """Engine options and the strategy's own options from one set of keywords."""
    own = option_names(strategy.Options)
    unknown = set(options) - own - _ENGINE_OPTIONS
    if unknown:
        valid = ", ".join(sorted(own | _ENGINE_OPTIONS))
        raise ConfigError(
            f"unknown option(s) for strategy {strategy.name!r}: {', '.join(sorted(unknown))}; "
            f"valid: {valid}"
        )
    engine = EngineOptions(**{k: v for k, v in options.items() if k in _ENGINE_OPTIONS})
    mine = strategy.Options(**{k: v for k, v in options.items() if k in own})
    return engine, mine


def _metered(model: Model | Metered, budget: BudgetLike, trace: Trace | None) -> Metered:
    if isinstance(model, Metered):
        if budget is not None and Budget.of(budget) is not model.budget:
            raise ConfigError("give the budget to Metered or to search(), not both")
        if trace is not None and trace is not model.trace:
            raise ConfigError("give the trace to Metered or to search(), not both")
        return model
    if not isinstance(model, Model):
        raise ConfigError(f"not a model: {model!r}")
    return Metered(model, Budget.of(budget), trace if trace is not None else Trace())


def new_state(space: SearchSpace, strategy: str) -> SearchState:
    """A fresh state holding only the root."""
    root = space.root()
    node = Node(
        id="n0",
        parent=None,
        depth=0,
        state=root.state,
        key=stable_digest(["root", root.state]),
        context=root.context,
        status="root",
    )
    state = SearchState(strategy=strategy, tree=SearchTree(node))
    state.closed[node.key] = node.id
    state.touch(node)
    return state


async def _call(hook: Checkpoint | None, state: SearchState) -> None:
    if hook is None:
        state.mark_saved()
        return
    out = hook(state)
    if inspect.isawaitable(out):
        await out
    state.mark_saved()


async def search(
    space: SearchSpace,
    strategy: str = "dfs",
    *,
    model: Model | Metered,
    budget: BudgetLike = None,
    trace: Trace | None = None,
    on_expansion: Checkpoint | None = None,
    resume: SearchState | dict[str, Any] | None = None,
    run_id: str | None = None,
    **options: Any,
) -> SearchResult:
    """Search `space` with the named strategy under `budget` (anything `Budget.of`
    takes; None: unlimited); see docs/search.md.

    `options` are the engine's (`samples`, `concurrency`, `temperature`, `seed`,
    `schedule`, `path_token_cap`, `summarizer`, `max_expansions`, `should_stop`) and the strategy's
    own (e.g. `width`, `rmax`, `heuristic`, `reducer`). `on_expansion(state)` runs after
    every expansion; `resume` continues a saved state (its usage counts against `budget`
    if that budget is unused). `run_id` names the run in its result (default: a new id).
    """
    started = time.perf_counter()
    strat = get_strategy(strategy)
    engine_options, strategy_options = split_options(strat, options)
    kernel = Kernel("search", _metered(model, budget, trace), run_id=run_id, started=started)
    metered = kernel.metered
    state = _starting_state(space, strat.name, resume)
    if resume is not None and metered.budget.used == ZERO and state.usage != ZERO:
        # A fresh budget on resume covers the whole run: what was spent counts.
        metered.budget.used = state.usage
        base, start = ZERO, ZERO
    else:
        base, start = state.usage, metered.usage
    engine = Engine(space, metered, state, engine_options)

    def sync_usage() -> None:
        state.usage = base + (metered.usage - start) - engine.unsettled_usage()

    termination: Termination | None = None
    with using_model(metered):
        kernel.start(
            strategy=strat.name,
            resumed=resume is not None,
            options={k: _show(v) for k, v in options.items()},
            budget=metered.budget.describe(),
        )
        if resume is None:
            strat.start(engine, strategy_options)
            await _call(on_expansion, state)
        try:
            while termination is None:
                stop = engine_options.should_stop
                if stop is not None and stop():
                    termination = "cancelled"
                    break
                before = state.expansions
                try:
                    termination = await strat.step(engine, strategy_options)
                except BudgetExceeded:
                    termination = "budget_exhausted"
                sync_usage()
                if termination is not None:
                    break
                if state.expansions != before or state.checkpoint_due:
                    await _call(on_expansion, state)
        except asyncio.CancelledError:
            await engine.close(wait=False)
            sync_usage()
            state.termination = "cancelled"
            _finish(kernel, state, "cancelled", termination="cancelled")
            await _call(on_expansion, state)
            raise
        except BaseException as exc:
            # Nothing keeps running after the search: calls under way are awaited
            # (paid anyway; a durable run keeps their answers) unless it is interrupted.
            await engine.close(wait=isinstance(exc, Exception))
            sync_usage()
            why = stop_reason_for(exc)
            _finish(kernel, state, why, termination=None, error=type(exc).__name__)
            raise
        # Prefetched calls no expansion asked for (the search ended first): the waiting
        # ones are cancelled, those under way awaited and booked before the usage is final.
        await engine.close()
        state.termination = termination
        sync_usage()
        await _call(on_expansion, state)
        return _ended(engine, space, kernel)


def _starting_state(
    space: SearchSpace, strategy: str, resume: SearchState | dict[str, Any] | None
) -> SearchState:
    """A fresh state, or the saved one to resume (of the same strategy)."""
    if resume is None:
        return new_state(space, strategy)
    state = resume if isinstance(resume, SearchState) else SearchState.from_dict(resume)
    if state.strategy != strategy:
        raise ConfigError(f"cannot resume a {state.strategy!r} search with strategy {strategy!r}")
    state.termination = None
    return state


def _ended(engine: Engine, space: SearchSpace, kernel: Kernel) -> SearchResult:
    """The result of a search that ended, and its `run_end` event."""
    state = engine.state
    seconds = kernel.elapsed()
    result = result_of(state, space, run_id=kernel.run_id, seconds=seconds, trace=kernel.trace)
    _finish(
        kernel,
        state,
        result.stop_reason,
        termination=state.termination,
        succeeded=result.succeeded,
        expansions=state.expansions,
        nodes=len(state.tree),
    )
    return result


def _finish(kernel: Kernel, state: SearchState, stop_reason: str, **data: Any) -> None:
    """The search's `run_end`: the kernel's, with the state's usage and steering counts
    (what a resumed search saved counts on)."""
    steering = Steering.from_dict(state.steering).as_dict()
    kernel.finish(stop_reason, used=state.usage.as_dict(), steering=steering, **data)


def _show(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, int | float) for v in value):
        return list(value)
    if hasattr(value, "as_dict"):
        return value.as_dict()
    return getattr(value, "__name__", type(value).__name__)


search_sync = run_sync(search)

__all__ = ["new_state", "search", "search_sync", "split_options"]
