"""RunSpec: everything needed to start (or restart, in a fresh process) one run, as JSON.

A run records *what* to solve (an app and its problem), *how* (strategy, options,
budget) and *with what* (a model spec), never live objects, so `guardsearch runs
resume RUN_ID` can rebuild the search in another process after a crash.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from guardsearch.core.budget import Budget
from guardsearch.core.errors import ConfigError
from guardsearch.models.spec import default_spec


@dataclass(frozen=True, kw_only=True)
class RunSpec:
    """A run's configuration: app + problem, strategy + options, model spec, budget."""

    app: str
    problem: dict[str, Any] = field(default_factory=dict)
    strategy: str = "dfs"
    options: dict[str, Any] = field(default_factory=dict)
    model: str = field(default_factory=default_spec)
    budget: dict[str, Any] = field(default_factory=dict)
    name: str = ""
    # The API key that started it over HTTP, as its digest (server/tenancy.py); "" for
    # a run started without a key (the CLI, a keyless server).
    tenant: str = ""

    def __post_init__(self) -> None:
        if not self.app:
            raise ConfigError("a run needs an app (e.g. 'game24' or 'package.module:build')")
        self.make_budget()  # a ConfigError now, not when the run starts
        for what, value in (("problem", self.problem), ("options", self.options)):
            try:
                json.dumps(value, allow_nan=False)
            except (TypeError, ValueError) as exc:
                raise ConfigError(
                    f"run {what} must be plain JSON (a durable run restarts from it): {exc}"
                ) from exc

    def make_budget(self) -> Budget:
        """A fresh ledger with the spec's limits (`Budget.of` of the budget mapping)."""
        return Budget.of(self.budget)

    def with_budget(self, **changes: Any) -> RunSpec:
        """This spec with some budget entries replaced (None entries are ignored)."""
        merged = {**self.budget, **{k: v for k, v in changes.items() if v is not None}}
        return replace(self, budget=merged)

    def solver_config(self) -> dict[str, Any]:
        """The part of the spec that defines the solver (not the problem instance)."""
        return {
            "app": self.app,
            "strategy": self.strategy,
            "options": self.options,
            "budget": self.budget,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "app": self.app,
            "problem": self.problem,
            "strategy": self.strategy,
            "options": self.options,
            "model": self.model,
            "budget": self.budget,
            "name": self.name,
            **({"tenant": self.tenant} if self.tenant else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunSpec:
        known = {"app", "problem", "strategy", "options", "model", "budget", "name", "tenant"}
        extra = set(d) - known
        if extra:
            raise ConfigError(f"unknown run spec field(s): {', '.join(sorted(extra))}")
        return cls(**d)
