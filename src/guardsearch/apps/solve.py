"""Solve one problem of any registered app: what `guardsearch solve APP PROBLEM` runs.

    result = await solve_app("game24", {"numbers": "4 5 6 10"}, model="embedded")

The app supplies everything problem-specific (guardsearch/registry.py): its problem
parser (`App.parse`, for the text a person types), its space and recommended options
(`App.build`), its answer check (`App.check`) and how the answer prints (`App.show`).
This module is the rest, the same for every app, so adding an app is one folder and
no CLI code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from guardsearch.core.budget import BudgetLike
from guardsearch.core.errors import ConfigError, RunError
from guardsearch.core.events import Trace
from guardsearch.models.base import Model
from guardsearch.models.metered import Metered
from guardsearch.models.spec import model_from_spec
from guardsearch.registry import App, get_app
from guardsearch.search.expand import Checkpoint
from guardsearch.search.result import SearchResult
from guardsearch.search.run import search
from guardsearch.sync import run_sync

DEFAULT_BUDGET_CALLS = 40


def problem_of(app: App | str, text: str) -> dict[str, Any]:
    """PROBLEM as the command line takes it: a JSON object, or the app's own text form
    (`App.parse`); a ConfigError says what is wrong."""
    found = get_app(app) if isinstance(app, str) else app
    if text.strip().startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"PROBLEM is not valid JSON: {exc}") from None
        if not isinstance(value, dict):
            raise ConfigError("PROBLEM must be a JSON object")
        return value
    if found.parse is None:
        example = json.dumps(found.example)
        raise ConfigError(f"app {found.name!r} takes its problem as JSON, e.g. '{example}'")
    try:
        return found.parse(text)
    except (KeyError, ValueError, TypeError) as exc:  # ConfigError passes as it is
        raise ConfigError(f"app {found.name!r} cannot read the problem {text!r}: {exc}") from exc


def load_model(model: Model | Metered | str | None) -> Model | Metered:
    """The model a solve runs on: a spec string (None: the default spec) built, a
    Model or a Metered as given."""
    return model_from_spec(model) if model is None or isinstance(model, str) else model


def shown(app: App, answer: Any) -> str:
    """How `app` prints an answer (`App.show`, else JSON; a text as it is)."""
    if app.show is not None:
        return app.show(answer)
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)


async def solve_app(
    app: App | str,
    problem: Mapping[str, Any],
    *,
    strategy: str | None = None,
    model: Model | Metered | str | None = None,
    budget: BudgetLike = DEFAULT_BUDGET_CALLS,
    trace: Trace | None = None,
    config: Mapping[str, Any] | None = None,
    on_expansion: Checkpoint | None = None,
    **options: Any,
) -> SearchResult:
    """Search `problem` (the app's problem object) with `strategy` (default: the
    app's) and the options the app recommends for it, overridden by `config` (the
    search options, as `run_search` takes them) and then by keyword `options`.

    `model` is a Model, a Metered (which brings its own budget and trace), a spec
    string, or None for the default spec. A solved result's answer is verified by the
    app's `check`; a wrong one is a RunError (the space's goal test let it through).
    """
    found = get_app(app) if isinstance(app, str) else app
    chosen = strategy or found.strategy
    setup = found.setup(dict(problem), chosen)
    the_model = load_model(model)
    metered = isinstance(the_model, Metered)
    result = await search(
        setup.space,
        chosen,
        model=the_model,
        budget=None if metered else budget,
        trace=None if metered else trace,
        on_expansion=on_expansion,
        **{**setup.options, **(config or {}), **options},
    )
    if result.succeeded and found.check is not None:
        wrong = found.check(dict(problem), result.answer)
        if wrong:
            raise RunError(f"{found.name}: the answer {result.answer!r} failed the check: {wrong}")
    return result


def solution(
    result: SearchResult, *, model: str, echo: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A solve's JSON (the CLI's `--json`): how it ended, the answer, the cost and the
    path as texts; `echo` adds fields of the problem (game24: `numbers`)."""
    return {
        "succeeded": result.succeeded,
        "answer": result.answer if result.succeeded else None,
        **(echo or {}),
        "strategy": result.strategy,
        "termination": result.termination,
        "calls": result.calls,
        "tokens": result.tokens,
        "expansions": result.expansions,
        "nodes": len(result.tree),
        "steering": result.steering.as_dict(),
        "seconds": round(result.seconds, 3),
        "model": model,
        **({"models": result.models} if result.models else {}),
        "path": result.steps,
    }


solve_app_sync = run_sync(solve_app)

__all__ = ["load_model", "problem_of", "shown", "solution", "solve_app", "solve_app_sync"]
