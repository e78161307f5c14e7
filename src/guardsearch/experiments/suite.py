"""Suite: what an experiment runs — its problems and its methods, by name.

The runner is generic: a suite (the Game of 24, the plan pipelines) lists problems
and runs one method on one problem with a metered model. Configs name a suite by its
app's registered name (`game24`, `plan`: the app's `suite`, guardsearch.registry) or
by a dotted path `package.module:attribute`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from guardsearch.core.errors import ConfigError
from guardsearch.models.metered import Metered
from guardsearch.registry import app_names, get_app


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


def suite_names() -> list[str]:
    """The registered apps that have an experiment suite."""
    return [name for name in app_names() if get_app(name).suite is not None]


def resolve_suite(name: str) -> Suite:
    """A suite by app name (`game24`) or dotted path (`pkg.module:attr`)."""
    module_name, sep, attr = name.partition(":")
    if not sep:
        try:
            suite_of = get_app(name).suite
        except ConfigError:
            suite_of = None
        if suite_of is None:
            raise ConfigError(
                f"unknown suite {name!r}; use {', '.join(suite_names())} or pkg.module:attr"
            )
        found = suite_of()
    else:
        try:
            found = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"cannot load suite {name!r}: {exc}") from exc
    suite = found() if isinstance(found, type) else found
    if not isinstance(suite, Suite):
        raise ConfigError(f"{name!r} is not a suite (needs problems, run, deterministic)")
    return suite
