"""The Strategy protocol and the registry that picks one by name.

A strategy is a small object: `start` puts its frontier into `state.data` (plain
JSON, small: it is saved whole) and `state.tables` (collections that grow with the
tree, saved by changed rows: A*'s open set, a BFS level), and `step` does one unit
of work, at most one expansion, reading and writing only those and the nodes. The
driver (`search/run.py`) saves a checkpoint after every step that expanded or set
`state.checkpoint_due`, so any strategy resumes from a saved frontier without knowing
a store exists.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

from guardsearch.core.errors import ConfigError
from guardsearch.search.expand import Engine
from guardsearch.search.state import Termination


class Strategy(Protocol):
    """One way to order expansions. `Options` is a kw_only dataclass of its knobs."""

    name: str
    Options: type[Any]

    def start(self, engine: Engine, options: Any) -> None:
        """Initialise `engine.state.data` (and `engine.state.tables`) for a fresh search."""
        ...

    async def step(self, engine: Engine, options: Any) -> Termination | None:
        """Do one unit of work (at most one expansion); a Termination ends the search."""
        ...


_REGISTRY: dict[str, Strategy] = {}


def register_strategy(strategy: Strategy, *, name: str | None = None) -> Strategy:
    """Make `strategy` available to `search(strategy=name)`."""
    key = name or strategy.name
    if not dataclasses.is_dataclass(strategy.Options):
        raise ConfigError(f"strategy {key!r}: Options must be a dataclass")
    _REGISTRY[key] = strategy
    return strategy


def get_strategy(name: str) -> Strategy:
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise ConfigError(f"unknown strategy {name!r}; choose one of: {known}") from None


def strategy_names() -> list[str]:
    return sorted(_REGISTRY)


def option_names(options_type: type[Any]) -> set[str]:
    return {f.name for f in dataclasses.fields(options_type)}


def rmax_at(engine: Engine, rmax: int | None, depth: int, default: int) -> int:
    """The expansions a node at `depth` gets: the search's `rmax` option when given,
    else the space's (`level_rmax`: a `StepSpace` step's `rmax`), else the strategy's
    `default` (docs/search.md, "Which rmax applies")."""
    if rmax is not None:
        return rmax
    own = getattr(engine.space, "level_rmax", None)
    found = own(depth) if callable(own) else None
    return found if isinstance(found, int) and found >= 1 else default
