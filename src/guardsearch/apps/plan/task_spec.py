"""A free task's checkable spec: what the task asks, in a form a guard can check.

    {"task": "Organise a one-day offsite for 12 people in Lisbon with a budget of 2000 euros",
     "kind": "event",
     "constraints": [
       {"id": "people", "kind": "people", "text": "12 people", "value": 12, "unit": "people",
        "terms": ["12"]},
       {"id": "budget", "kind": "budget", "text": "2000 euros", "value": 2000, "unit": "EUR",
        "terms": ["2000"]},
       {"id": "duration", "kind": "duration", "text": "one-day", "value": 1, "unit": "day",
        "terms": ["day"]},
       {"id": "place", "kind": "place", "text": "Lisbon", "terms": ["Lisbon"]}],
     "order": [],
     "source": "code"}

A constraint is *addressed* by a plan step whose words (its action and detail, through
task_text.words) contain one of its `terms` (every word of that term); a `budget` is
also addressed by steps that give costs, which must then add up to at most `value`.
`order` lists stated dependencies: a step doing `before` must come before one doing
`after`. `kind` is the kind of task (one of TASK_KINDS; `other` when none fits), which
the analysis's class must match. Code extracts it (task_extract.py), the model may add
phrases the task states to it (task_model_spec.py, `extract="model"`), and a user may
write or edit one (`--spec FILE`, JSON or YAML in this shape; `task` may be left out
when the task is given on the command line).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from guardsearch.apps.plan.task_text import number_text, words
from guardsearch.core.errors import ConfigError

TASK_KINDS: tuple[str, ...] = (
    "event",
    "trip",
    "study_plan",
    "software_change",
    "data_migration",
    "operations_runbook",
    "incident_response",
    "home_project",
    "research_project",
    "recipe",
    "other",
)
ConstraintKind = Literal[
    "people",
    "budget",
    "duration",
    "place",
    "date",
    "time",
    "quantity",
    "number",
    "deliverable",
    "requirement",
]


class Constraint(BaseModel):
    """One thing the task asks that some step must address."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=40)
    kind: ConstraintKind
    text: str = Field(min_length=1, max_length=80)
    value: float | None = None
    unit: str | None = Field(default=None, max_length=20)
    terms: list[str] = Field(default_factory=list, max_length=8)

    def alternatives(self) -> list[tuple[str, ...]]:
        """The normalised terms (a step must contain every word of one); the text when
        none are given."""
        found = [words(t) for t in (self.terms or [self.text])]
        return [w for w in found if w]

    def describe(self) -> str:
        """The constraint as the plan prompt and the feedback name it."""
        if self.kind == "budget" and self.value is not None:
            unit = f" {self.unit}" if self.unit else ""
            return f"budget {number_text(self.value)}{unit} (costs must add up to at most that)"
        return self.text


class Dependency(BaseModel):
    """A stated order: a step doing `before` comes before any step doing `after`."""

    model_config = ConfigDict(extra="forbid")

    before: str = Field(min_length=1, max_length=80)
    after: str = Field(min_length=1, max_length=80)


class TaskSpec(BaseModel):
    """What a free task asks: its kind, constraints and stated order."""

    model_config = ConfigDict(extra="forbid")

    task: str = Field(default="", max_length=600)
    kind: str = "other"
    constraints: list[Constraint] = Field(default_factory=list, max_length=16)
    order: list[Dependency] = Field(default_factory=list, max_length=8)
    source: str = Field(default="code", max_length=200)

    def model_post_init(self, __context: Any) -> None:
        if self.kind not in TASK_KINDS:
            raise ValueError(f"kind {self.kind!r} is not one of {', '.join(TASK_KINDS)}")
        ids = [c.id for c in self.constraints]
        if len(set(ids)) != len(ids):
            raise ValueError("constraint ids must be unique")

    @property
    def budget(self) -> Constraint | None:
        return next((c for c in self.constraints if c.kind == "budget"), None)

    def describe(self) -> str:
        """The spec as the lines the prompts' objective ends with (empty: nothing to say)."""
        lines = []
        if self.constraints:
            lines.append("The plan must address each of these, in the detail of a step:")
            lines += [f"- {c.describe()}" for c in self.constraints]
        for dep in self.order:
            lines.append(f"Stated order: {dep.before} before {dep.after}.")
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


def load_spec_file(path: Path, task: str | None = None) -> TaskSpec:
    """A spec written or edited by a user (JSON or YAML); `task` fills its text when
    the file leaves it out. Any problem is a one-line ConfigError."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read spec file {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"spec file {path} is not valid JSON/YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"spec file {path} must hold one object (task, kind, constraints)")
    data.setdefault("source", "file")
    if task and not data.get("task"):
        data["task"] = task
    try:
        spec = TaskSpec.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "spec"
        raise ConfigError(f"spec file {path}: {where}: {first['msg']}") from None
    if not spec.task:
        raise ConfigError(f"spec file {path} has no task: give one in the file or as TASK")
    return spec
