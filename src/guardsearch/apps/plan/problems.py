"""Planning problems: facts, actions and what a valid plan must achieve.

A problem is a small STRIPS-like world a guard can judge mechanically:

- `initial`: the facts true at the start; `goal`: the facts a plan must make true;
- `safe`: the facts that must still hold at the end of any failure branch (if a risky
  action fails and the goal cannot be reached, the plan must at least recover these);
- `actions`: what a plan may do. Each action needs its `pre` facts, gives its `effects`
  on success, and, when `may_fail`, may fail for good, losing its `loses` facts;
- `r_max`: the most a plan may spend on retries (the sum of its steps' retry budgets).

Facts and action names are short normalised strings (`tests_pass`, `deploy_fix`), so a
small model can copy them exactly and a guard can compare them as sets.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from guardsearch.core.errors import ConfigError

Category = Literal["bug_fix", "feature", "refactor", "data_migration", "operations_runbook"]
CATEGORIES: tuple[str, ...] = (
    "bug_fix",
    "feature",
    "refactor",
    "data_migration",
    "operations_runbook",
)
NAME_PATTERN = r"^[a-z][a-z0-9_]{0,39}$"


class Action(BaseModel):
    """One thing a plan may do: needs `pre`, gives `effects`; a risky one may fail."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=NAME_PATTERN)
    pre: tuple[str, ...] = ()
    effects: tuple[str, ...] = Field(min_length=1)
    may_fail: bool = False
    loses: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> Action:
        for fact in (*self.pre, *self.effects, *self.loses):
            _check_name(fact, f"action {self.name}")
        if self.loses and not self.may_fail:
            raise ValueError(f"action {self.name}: only a may_fail action can lose facts")
        return self

    def describe(self) -> str:
        needs = ", ".join(self.pre) if self.pre else "nothing"
        line = f"- {self.name}: needs {needs} -> gives {', '.join(self.effects)}"
        if self.may_fail:
            lost = f", loses {', '.join(self.loses)}" if self.loses else ""
            line += f"; RISKY: may fail{lost}"
        return line


class PlanProblem(BaseModel):
    """A planning problem with everything a guard needs to judge a plan mechanically."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{1,40}$")
    category: Category
    title: str = Field(min_length=3, max_length=120)
    task: str = Field(min_length=3, max_length=600)
    initial: tuple[str, ...]
    goal: tuple[str, ...] = Field(min_length=1)
    safe: tuple[str, ...] = ()
    r_max: int = Field(ge=1, le=50)
    actions: tuple[Action, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> PlanProblem:
        for fact in (*self.initial, *self.goal, *self.safe):
            _check_name(fact, f"problem {self.id}")
        names = [a.name for a in self.actions]
        if len(set(names)) != len(names):
            raise ValueError(f"problem {self.id}: action names must be unique")
        if set(self.goal) <= set(self.initial):
            raise ValueError(f"problem {self.id}: the goal already holds initially")
        if not set(self.safe) <= set(self.initial):
            raise ValueError(f"problem {self.id}: safe facts must hold initially")
        if any(a.may_fail for a in self.actions) and not self.safe:
            raise ValueError(f"problem {self.id}: risky actions need safe facts")
        return self

    def action(self, name: str) -> Action | None:
        return next((a for a in self.actions if a.name == name), None)

    @property
    def action_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.actions)

    @property
    def facts(self) -> tuple[str, ...]:
        """Every fact the problem mentions, sorted: the vocabulary of plans."""
        found = set(self.initial) | set(self.goal) | set(self.safe)
        for a in self.actions:
            found |= set(a.pre) | set(a.effects) | set(a.loses)
        return tuple(sorted(found))

    def describe(self, task: str | None = None) -> str:
        """The problem as the objective every step's prompt starts with."""
        lines = [
            task or f"{self.title}. {self.task}",
            f"Initial facts: {', '.join(self.initial) or 'none'}",
            f"Goal facts: {', '.join(self.goal)}",
        ]
        if self.safe:
            lines.append(
                f"Safe facts (must hold again if a risky action fails): {', '.join(self.safe)}"
            )
        lines.append(f"R_max (most the retry budgets may add up to): {self.r_max}")
        lines.append("Actions:")
        lines += [a.describe() for a in self.actions]
        return "\n".join(lines)

    def summary(self) -> dict[str, str]:
        return {"id": self.id, "category": self.category, "title": self.title}


def _check_name(value: str, where: str) -> None:
    if not re.match(NAME_PATTERN, value):
        raise ValueError(f"{where}: {value!r} is not a normalised fact name ({NAME_PATTERN})")


def parse_problems(data: object, source: str) -> tuple[PlanProblem, ...]:
    """Problems from parsed YAML/JSON: a list, or {"problems": [...]}; clear errors."""
    if isinstance(data, dict) and "problems" in data:
        data = data["problems"]
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not data:
        raise ConfigError(f"{source}: expected a list of problems")
    out: list[PlanProblem] = []
    for i, item in enumerate(data):
        try:
            out.append(PlanProblem.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = "/".join(str(p) for p in first["loc"]) or "(problem)"
            raise ConfigError(f"{source}: problem #{i + 1} at {where}: {first['msg']}") from exc
    ids = [p.id for p in out]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ConfigError(f"{source}: duplicate problem ids {dupes}")
    return tuple(out)


@cache
def problems() -> tuple[PlanProblem, ...]:
    """The problem set shipped with the package (`apps/plan/data/problems.yaml`)."""
    ref = resources.files("guardsearch.apps.plan").joinpath("data/problems.yaml")
    return parse_problems(yaml.safe_load(ref.read_text("utf-8")), "apps/plan/data/problems.yaml")


def get_problem(ident: str, pool: Sequence[PlanProblem] | None = None) -> PlanProblem:
    """The shipped problem `ident`; an unknown id is a ConfigError listing a few ids."""
    pool = problems() if pool is None else pool
    for p in pool:
        if p.id == ident:
            return p
    shown = ", ".join(p.id for p in pool[:8])
    raise ConfigError(
        f"no problem {ident!r}; shipped ids include {shown} (guardsearch plan --list)"
    )


def load_problem_file(path: str | Path) -> PlanProblem:
    """One problem from a YAML or JSON file (the first, if it holds several)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read problem file {p}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"problem file {p} is not UTF-8 text: {exc.reason}") from exc
    try:
        data = json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise ConfigError(f"problem file {p} is not valid YAML/JSON: {exc}") from exc
    return parse_problems(data, str(p))[0]
