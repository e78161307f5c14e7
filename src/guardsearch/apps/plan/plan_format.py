"""The plan format: a contingent plan as a JSON DAG of steps (a pydantic model).

    {"steps": [
      {"id": "s1", "action": "backup_db", "pre": ["db_online"], "effects": ["backup_taken"],
       "retry_budget": 1},
      {"id": "s2", "action": "run_migration", "pre": ["backup_taken"], "effects": ["schema_v2"],
       "retry_budget": 2, "on_failure": "s3"},
      {"id": "s3", "action": "restore_backup", "pre": ["backup_taken"],
       "effects": ["data_intact"], "retry_budget": 1}
    ]}

Semantics (what the guards check): a step whose id some `on_failure` names is a
*recovery* step; the others form the *main line*, run in list order. When a step fails
for good (after its `retry_budget` attempts), execution jumps to its `on_failure` step,
whose success ends that failure branch. `on_failure` may only name a later step, so
the edges (main line, failure branches) always point forward: the plan is a DAG.

`pre` and `effects` restate the action's preconditions and effects. A plan may leave
them out: `complete_plan` fills them in from the problem's actions (the Medium guard
rejects a step that states them differently). So a model spends its tokens on the
decisions — which actions, their order, retry budgets, failure branches — and
`generation_schema(problem, actions)` constrains its output to exactly those: only
the given actions (enums), an `on_failure` only on risky ones, retry budgets from 1 to
R_max (the guards reject any other), every string and list bounded (the embedded
llama.cpp grammar needs bounds). `plan_schema()` is the structural
schema the Minimal guard validates. A free task has no action catalogue:
`free_generation_schema(actions)` allows recon's action names (or any normalised
name), and an `on_failure` on any step.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from guardsearch.apps.plan.problems import NAME_PATTERN, PlanProblem

MAX_STEPS = 8
MAX_GENERATED_STEPS = 6
MAX_FACTS = 6
ID_CHARS = 4
NAME_CHARS = 40
MAX_RETRY_BUDGET = 9
ID_PATTERN = "^s[1-9]$"
DETAIL_CHARS = 120
MAX_COST = 10_000_000


class PlanStep(BaseModel):
    """One node of the plan DAG."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=ID_CHARS)
    action: str = Field(min_length=1, max_length=NAME_CHARS)
    pre: list[str] = Field(default_factory=list, max_length=MAX_FACTS)
    effects: list[str] = Field(default_factory=list, max_length=MAX_FACTS)
    retry_budget: int = Field(le=MAX_RETRY_BUDGET)
    on_failure: str | None = Field(default=None, max_length=ID_CHARS)
    # A free task's step says what exactly it does, and what it costs when the task
    # has a budget (task_guards.py); a problem's steps need neither.
    detail: str | None = Field(default=None, max_length=DETAIL_CHARS)
    cost: float | None = Field(default=None, ge=0)


class Plan(BaseModel):
    """A contingent plan: the main line in list order, recovery steps named by `on_failure`."""

    model_config = ConfigDict(extra="forbid")

    steps: list[PlanStep] = Field(min_length=1, max_length=MAX_STEPS)

    def recovery_ids(self) -> set[str]:
        return {s.on_failure for s in self.steps if s.on_failure}

    def main_line(self) -> list[PlanStep]:
        recovery = self.recovery_ids()
        return [s for s in self.steps if s.id not in recovery]

    def by_id(self, ident: str) -> PlanStep | None:
        return next((s for s in self.steps if s.id == ident), None)

    @property
    def total_retry_budget(self) -> int:
        return sum(s.retry_budget for s in self.steps)


def complete_plan(problem: PlanProblem, value: Any) -> Any:
    """`value` with each step's missing `pre`/`effects` filled in from its action.

    Anything that is not a plan-shaped object is returned unchanged, for the Minimal
    guard to explain; steps naming an unknown action are left as they are.
    """
    if not isinstance(value, dict) or not isinstance(value.get("steps"), list):
        return value
    steps = []
    for step in value["steps"]:
        name = step.get("action") if isinstance(step, dict) else None
        action = problem.action(name) if isinstance(name, str) else None
        if action is not None and isinstance(step, dict):
            filled = dict(step)
            filled.setdefault("pre", list(action.pre))
            filled.setdefault("effects", list(action.effects))
            # Keep the documented key order: id, action, pre, effects, ...
            order = ["id", "action", "pre", "effects", "retry_budget", "on_failure"]
            step = {k: filled[k] for k in order if k in filled} | {
                k: v for k, v in filled.items() if k not in order
            }
        steps.append(step)
    return {**value, "steps": steps}


def _inline(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every local `$ref` replaced by its definition (no `$defs` left)."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return walk(copy.deepcopy(defs[ref.removeprefix("#/$defs/")]))
            return {k: walk(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    out: dict[str, Any] = walk(schema)
    return out


def _bound_strings(node: Any) -> None:
    """Give list items a maxLength (pydantic leaves `list[str]` items unbounded)."""
    if isinstance(node, dict):
        if node.get("type") == "array" and node.get("items") == {"type": "string"}:
            node["items"] = {"type": "string", "maxLength": NAME_CHARS}
        for value in node.values():
            _bound_strings(value)
    elif isinstance(node, list):
        for value in node:
            _bound_strings(value)


def plan_schema() -> dict[str, Any]:
    """The structural JSON Schema of a plan, derived from the pydantic model."""
    schema = _inline(Plan.model_json_schema())
    _bound_strings(schema)
    return schema


def step_schema_for(problem: PlanProblem, actions: Sequence[str]) -> dict[str, Any]:
    """One plan step doing one of `actions` (an enum: the guards reject any other
    action, so the grammar never lets one be written); only a risky action's step may
    name `on_failure`, so the risky ones are a second variant."""
    known = [problem.action(name) for name in dict.fromkeys(actions)]
    # The guards reject a retry budget below 1 (Minimal) or one step's above R_max
    # (Medium: the total would exceed it), so the grammar cannot write either.
    budget = {"type": "integer", "minimum": 1, "maximum": min(MAX_RETRY_BUDGET, problem.r_max)}
    plain = [a.name for a in known if a is not None and not a.may_fail]
    risky = [a.name for a in known if a is not None and a.may_fail]
    variants: list[dict[str, Any]] = []
    for names, branch in ((plain, False), (risky, True)):
        if not names:
            continue
        properties: dict[str, Any] = {
            "id": {"type": "string", "pattern": ID_PATTERN},
            "action": {"type": "string", "enum": names},
            "retry_budget": dict(budget),
        }
        if branch:
            properties["on_failure"] = {"type": "string", "pattern": ID_PATTERN}
        variants.append(
            {
                "type": "object",
                "properties": properties,
                "required": ["id", "action", "retry_budget"],
                "additionalProperties": False,
            }
        )
    if not variants:
        raise ValueError("no known action to plan with")
    return variants[0] if len(variants) == 1 else {"anyOf": variants}


def schema_actions(schema: dict[str, Any]) -> list[str]:
    """The actions a generation schema lets a plan step name (from its enums)."""
    items = schema["properties"]["steps"]["items"]
    return [name for v in items.get("anyOf", [items]) for name in v["properties"]["action"]["enum"]]


def generation_schema(problem: PlanProblem, actions: Sequence[str] | None = None) -> dict[str, Any]:
    """The schema a model's plan is constrained to: only `actions` (default: all)."""
    names = [a for a in (actions or problem.action_names) if problem.action(a) is not None]
    return {
        "type": "object",
        "properties": {
            "steps": {
                "type": "array",
                "items": step_schema_for(problem, names or problem.action_names),
                "minItems": 1,
                "maxItems": MAX_GENERATED_STEPS,
            }
        },
        "required": ["steps"],
        "additionalProperties": False,
    }


def free_generation_schema(
    actions: Sequence[str] | None = None, *, costs: bool = False
) -> dict[str, Any]:
    """The generation schema for a free task: steps using `actions` (recon's names;
    default: any normalised name), each with a `detail` saying what exactly, a `cost`
    when `costs` (the task has a budget), and an optional `on_failure` step."""
    names = list(dict.fromkeys(actions or ()))
    action: dict[str, Any] = (
        {"type": "string", "enum": names}
        if names
        else {"type": "string", "pattern": NAME_PATTERN, "maxLength": NAME_CHARS}
    )
    properties: dict[str, Any] = {
        "id": {"type": "string", "pattern": ID_PATTERN},
        "action": action,
        "detail": {"type": "string", "minLength": 3, "maxLength": DETAIL_CHARS - 20},
        "retry_budget": {"type": "integer", "minimum": 1, "maximum": MAX_RETRY_BUDGET},
        "on_failure": {"type": "string", "pattern": ID_PATTERN},
    }
    if costs:
        properties["cost"] = {"type": "integer", "minimum": 0, "maximum": MAX_COST}
    step = {
        "type": "object",
        "properties": properties,
        "required": ["id", "action", "detail", "retry_budget"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "steps": {
                "type": "array",
                "items": step,
                "minItems": 1,
                "maxItems": MAX_GENERATED_STEPS,
            }
        },
        "required": ["steps"],
        "additionalProperties": False,
    }
