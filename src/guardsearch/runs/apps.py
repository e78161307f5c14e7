"""The app registry: how a run's spec becomes a search space in any process.

An app is a function `build(problem: dict) -> AppSetup` (the space plus default
search options). Built-in apps have short names (`game24`); any other is named by
import path, `package.module:function`, so tests and plugins need no registration
in this file.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from guardsearch.core.errors import ConfigError
from guardsearch.search.space import SearchSpace


@dataclass(kw_only=True)
class AppSetup:
    """A ready search space and the options the app recommends for a strategy."""

    space: SearchSpace
    options: dict[str, Any] = field(default_factory=dict)


AppBuilder = Callable[[dict[str, Any], str], AppSetup]

_APPS: dict[str, AppBuilder] = {}


def register_app(name: str, builder: AppBuilder) -> AppBuilder:
    """Make `builder(problem, strategy)` available to runs as app `name`."""
    _APPS[name] = builder
    return builder


def app_names() -> list[str]:
    return sorted(_APPS)


def build_app(name: str, problem: dict[str, Any], strategy: str) -> AppSetup:
    """The space (and default options) of app `name` for `problem`."""
    builder = _APPS.get(name)
    if builder is None:
        if ":" not in name:
            raise ConfigError(
                f"unknown app {name!r}; choose one of {', '.join(app_names())} "
                "or name a builder as 'package.module:function'"
            )
        module_name, _, attr = name.partition(":")
        try:
            builder = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"cannot load app builder {name!r}: {exc}") from exc
    setup = builder(dict(problem), strategy)
    if not isinstance(setup, AppSetup):
        raise ConfigError(f"app {name!r} must return an AppSetup, got {type(setup).__name__}")
    return setup


def _game24(problem: dict[str, Any], strategy: str) -> AppSetup:
    from guardsearch.apps.game24 import Game24Space, default_options, parse_numbers
    from guardsearch.apps.game24.arith import StepError

    numbers = problem.get("numbers")
    if not isinstance(numbers, str):
        raise ConfigError('game24 needs {"numbers": "4 5 6 10"}')
    try:
        values = parse_numbers(numbers)
    except StepError as exc:
        raise ConfigError(f"Game of 24 needs numbers like '4 5 6 10': {exc}") from exc
    space = Game24Space(
        numbers=values,
        value=bool(problem.get("value", False)),
        constrained=bool(problem.get("constrained", True)),
    )
    # As in solve_game24: dfs tries siblings first, consensus samples (temperature > 0).
    return AppSetup(space=space, options=default_options(strategy))


register_app("game24", _game24)
