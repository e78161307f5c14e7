"""Suite: what an experiment runs — its problems and its methods, by name.

The runner is generic: a suite (the Game of 24 today, plans tomorrow) lists problems
and runs one method on one problem with a metered model. Suites are named in configs
by a short alias or a dotted path `package.module:attribute`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from guardsearch.core.errors import ConfigError
from guardsearch.models.metered import Metered

# Short names for the suites that ship with the package.
SUITES = {"game24": "guardsearch.apps.game24.suite:suite"}


@dataclass(frozen=True)
class Problem:
    """One problem of a suite: a stable id and whatever the methods need."""

    id: str
    input: Any
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MethodSpec:
    """A method as configured: a label (unique in the experiment), the suite's method
    name it runs, and its options."""

    label: str
    method: str
    options: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Suite(Protocol):
    name: str

    def problems(self, selector: Any) -> list[Problem]:
        """The problems a config's `problems:` entry selects."""
        ...

    def method_names(self) -> list[str]: ...

    def deterministic(self, method: MethodSpec) -> bool:
        """True when a run at budget B replays a run at a larger budget up to B calls,
        so pass rates at smaller budgets can be read off one run at the largest."""
        ...

    async def run(
        self, method: MethodSpec, problem: Problem, model: Metered, trial: int
    ) -> dict[str, Any]:
        """Run one trial. Returns at least `succeeded`, `termination`; optionally
        `answer`, `backtracks` (depths), `path`, `nodes` (for tuning)."""
        ...


def resolve_suite(name: str) -> Suite:
    """A suite by alias (`game24`) or dotted path (`pkg.module:attr`)."""
    target = SUITES.get(name, name)
    module_name, sep, attr = target.partition(":")
    if not sep:
        raise ConfigError(f"unknown suite {name!r}; use {', '.join(SUITES)} or pkg.module:attr")
    try:
        found = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot load suite {name!r}: {exc}") from exc
    suite = found() if isinstance(found, type) else found
    if not isinstance(suite, Suite):
        raise ConfigError(f"{name!r} is not a suite (needs problems, run, deterministic)")
    return suite
