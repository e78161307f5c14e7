"""The upstream steps' outputs (JSON Schemas) and guards: analysis, recon, strategy.

- analysis: `{"problem_class", "key_facts"}` — a problem class and key facts present,
  all of them facts of the problem;
- recon: `{"actions"}` — concrete findings tied to the spec: the actions that matter,
  among them, for every goal fact, one that gives it;
- strategy: `{"approach", "rationale", "order"}` — one named approach with a rationale
  and an order of actions, all of them found by recon.

Every string and list is bounded (the llama.cpp grammar needs it); the schemas list
the problem's own facts and actions as enums, so a small model can only name real ones.

For a free task (`problem=None`: no facts or actions to compare with) the schemas ask
for short normalised names (`^[a-z][a-z0-9_]{0,39}$`) instead of enums, and the guards
check only what needs no problem: a class and key facts present, recon names actions,
the strategy's order uses only recon's actions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from guardsearch.apps.plan.problems import CATEGORIES, NAME_PATTERN, PlanProblem
from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.errors import ParseError
from guardsearch.core.guard_result import GuardResult
from guardsearch.guards.parse import parse_json

MAX_KEY_FACTS = 4
MAX_LISTED = 8


def _names(values: Sequence[str]) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


def _free_name() -> dict[str, Any]:
    """Any short normalised name (a free task has no vocabulary to list)."""
    return {"type": "string", "pattern": NAME_PATTERN, "maxLength": 40}


def is_name(value: str) -> bool:
    return re.match(NAME_PATTERN, value) is not None


def analysis_schema(problem: PlanProblem | None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "problem_class": _names(CATEGORIES),
            "key_facts": {
                "type": "array",
                "items": _names(problem.facts) if problem else _free_name(),
                "minItems": 1,
                "maxItems": MAX_KEY_FACTS,
            },
        },
        "required": ["problem_class", "key_facts"],
        "additionalProperties": False,
    }


def recon_schema(problem: PlanProblem | None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "actions": {
                "type": "array",
                "items": _names(problem.action_names) if problem else _free_name(),
                "minItems": 1,
                "maxItems": MAX_LISTED,
            },
        },
        "required": ["actions"],
        "additionalProperties": False,
    }


def strategy_schema(
    problem: PlanProblem | None, actions: Sequence[str] | None = None
) -> dict[str, Any]:
    """`order` may only use `actions` (recon's findings) when given."""
    if problem is None:
        found = [a for a in dict.fromkeys(actions or ()) if is_name(a)]
        items = _names(found) if found else _free_name()
    else:
        names = [a for a in (actions or ()) if problem.action(a)] or list(problem.action_names)
        items = _names(names)
    return {
        "type": "object",
        "properties": {
            "approach": {"type": "string", "minLength": 3, "maxLength": 40},
            "rationale": {"type": "string", "minLength": 10, "maxLength": 120},
            "order": {
                "type": "array",
                "items": items,
                "minItems": 1,
                "maxItems": MAX_LISTED,
            },
        },
        "required": ["approach", "rationale", "order"],
        "additionalProperties": False,
    }


def earlier(context: Context, step: str) -> dict[str, Any] | None:
    """The parsed JSON output of an earlier `step` in `context`, if it is there."""
    for name, text in reversed(context.artifacts):
        if name == step:
            try:
                value = parse_json(text)
            except ParseError:
                return None
            return value if isinstance(value, dict) else None
    return None


def recon_actions(value: Any) -> list[str] | None:
    """The actions a recon output lists, or None when it is not a recon output."""
    if isinstance(value, dict) and isinstance(value.get("actions"), list):
        return [a for a in value["actions"] if isinstance(a, str)]
    return None


def _set(values: Sequence[str] | set[str]) -> str:
    return "{" + ", ".join(sorted(values)) + "}"


@dataclass
class AnalysisGuard:
    """A problem class and key facts present, all of them facts of this problem (for a
    free task: short lower_snake_case names)."""

    problem: PlanProblem | None
    name: str = "analysis"

    async def check(self, artifact: Artifact, context: Context) -> GuardResult:
        value = artifact.value
        facts = [f for f in value.get("key_facts", []) if isinstance(f, str)]
        if self.problem is None:
            if value.get("problem_class") not in CATEGORIES:
                return GuardResult.fail(
                    f"problem_class must be one of {', '.join(CATEGORIES)}", self.name
                )
            unknown = [f for f in facts if not is_name(f)]
            if unknown:
                return GuardResult.fail(
                    f"key_facts {_set(unknown)} are not short lower_snake_case fact names",
                    self.name,
                )
        else:
            unknown = [f for f in facts if f not in self.problem.facts]
            if unknown:
                return GuardResult.fail(
                    f"key_facts {_set(unknown)} are not facts of this problem", self.name
                )
        if not facts:
            return GuardResult.fail("analysis names no key facts", self.name)
        return GuardResult.ok(self.name)


@dataclass
class ReconGuard:
    """Findings tied to the spec: real actions, and one giving each goal fact (for a
    free task, with no spec: at least one action, each a lower_snake_case name)."""

    problem: PlanProblem | None
    name: str = "recon"

    async def check(self, artifact: Artifact, context: Context) -> GuardResult:
        value = artifact.value
        listed = set(recon_actions(value) or [])
        if self.problem is None:  # a free task: actions named, nothing to tie them to
            if not listed:
                return GuardResult.fail("recon lists no actions", self.name)
            odd = [a for a in listed if not is_name(a)]
            if odd:
                return GuardResult.fail(
                    f"actions {_set(odd)} are not short lower_snake_case action names",
                    self.name,
                )
            return GuardResult.ok(self.name)
        unknown = listed - set(self.problem.action_names)
        if unknown:
            return GuardResult.fail(f"actions {_set(unknown)} are not in the problem", self.name)
        given = {fact for a in self.problem.actions if a.name in listed for fact in a.effects}
        uncovered = [g for g in self.problem.goal if g not in given]
        if uncovered:
            return GuardResult.fail(
                f"recon lists no action that gives goal fact(s) {_set(uncovered)}; "
                f"list the actions that produce them",
                self.name,
            )
        return GuardResult.ok(self.name)


@dataclass
class StrategyGuard:
    """One named approach with a rationale; its order uses only recon's actions."""

    problem: PlanProblem | None
    name: str = "strategy"

    async def check(self, artifact: Artifact, context: Context) -> GuardResult:
        value = artifact.value
        approach = str(value.get("approach", "")).strip()
        rationale = str(value.get("rationale", "")).strip()
        problems: list[str] = []
        if not any(c.isalpha() for c in approach) or len(approach.split()) > 6:
            problems.append("approach must name one approach in a few words")
        if len(rationale.split()) < 3:
            problems.append("rationale must say in a sentence why the approach fits")
        order = [a for a in value.get("order", []) if isinstance(a, str)]
        if self.problem is None:
            unknown = [a for a in order if not is_name(a)]
            if unknown:
                problems.append(f"order uses {_set(unknown)}, which are not action names")
        else:
            unknown = [a for a in order if self.problem.action(a) is None]
            if unknown:
                problems.append(f"order uses {_set(unknown)}, which are not actions of the problem")
        found = recon_actions(earlier(context, "recon"))
        if found is not None:
            extra = [a for a in order if a not in found and a not in unknown]
            if extra:
                problems.append(f"order uses {_set(extra)}, which recon did not list")
        if problems:
            return GuardResult.fail("; ".join(problems), self.name)
        return GuardResult.ok(self.name)
