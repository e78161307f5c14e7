"""The upstream steps' outputs (JSON Schemas) and guards: analysis, recon, strategy.

- analysis: `{"problem_class", "key_facts"}` — a problem class and key facts present,
  all of them facts of the problem;
- recon: `{"actions"}` — concrete findings tied to the spec: actions of the problem
  that, in some order, can reach the goal from the initial facts (else the fix: the
  actions to add, also as a patch);
- strategy: `{"approach", "rationale", "order"}` — one named approach with a rationale
  and an order of actions, all of them found by recon, that run in sequence meets each
  action's needs and reaches the goal (else the fix: an order that does, as a patch).
  Recon's list is also declared as a constraint on the order (guards/constraints.py).

A strategy or recon output that fails only for a fix the guard can compute is repaired
without a model call (the step or the search engine applies the patch and judges again:
`upstream.py`).

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

from guardsearch.apps.plan.fixes import closure
from guardsearch.apps.plan.problems import CATEGORIES, NAME_PATTERN, PlanProblem
from guardsearch.apps.plan.task_checks import action_problem, same_action
from guardsearch.apps.plan.task_extract import fitting_kinds
from guardsearch.apps.plan.task_spec import TASK_KINDS, TaskSpec
from guardsearch.apps.plan.upstream import (
    missing_actions,
    run_order,
    runnable_order,
    sufficient,
    wanted_facts,
)
from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.errors import ParseError
from guardsearch.core.guard_result import GuardResult
from guardsearch.guards.diff import make_patch
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
            "problem_class": _names(CATEGORIES if problem else TASK_KINDS),
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


def _effects(problem: PlanProblem, name: str) -> str:
    action = problem.action(name)
    return ", ".join(action.effects) if action else "nothing"


@dataclass
class AnalysisGuard:
    """A problem class and key facts present, all of them facts of this problem (for a
    free task: short lower_snake_case names, and a class that fits the task: its spec's
    kind, or — when code read the spec — any kind whose words the task uses; a user who
    disagrees edits the spec, whose kind is then the only one)."""

    problem: PlanProblem | None
    spec: TaskSpec | None = None
    name: str = "analysis"

    def _fitting(self, kind: str) -> tuple[str, ...]:
        """The spec's kind; for a spec code read, also any kind whose words the task uses."""
        if self.spec is None or not self.spec.source.startswith("code"):
            return (kind,)
        return (kind, *fitting_kinds(self.spec.task))

    async def check(self, artifact: Artifact, context: Context) -> GuardResult:
        value = artifact.value
        facts = [f for f in value.get("key_facts", []) if isinstance(f, str)]
        if self.problem is None:
            chosen = value.get("problem_class")
            if chosen not in TASK_KINDS:
                return GuardResult.fail(
                    f"problem_class must be one of {', '.join(TASK_KINDS)}", self.name
                )
            kind = self.spec.kind if self.spec is not None else chosen
            if chosen not in self._fitting(kind):
                return GuardResult.fail(
                    f"problem_class {chosen} does not fit the task: the task's words make it "
                    f"{kind}. Fix: problem_class {kind}",
                    self.name,
                    patch=[{"op": "replace", "path": "/problem_class", "value": kind}],
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
    free task, with no facts to tie them to: at least one action, each a lower_snake_case
    name of an action on an object, none twice — the plan may only use these)."""

    problem: PlanProblem | None
    spec: TaskSpec | None = None
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
            return self._free_names(recon_actions(value) or [])
        unknown = listed - set(self.problem.action_names)
        if unknown:
            return GuardResult.fail(f"actions {_set(unknown)} are not in the problem", self.name)
        names = recon_actions(value) or []
        if sufficient(self.problem, names):
            return GuardResult.ok(self.name)
        return self._insufficient(names)

    def _free_names(self, names: list[str]) -> GuardResult:
        """A free task's actions: each an action on an object, none twice. When some are
        and some are not, the verdict carries the list without the others as a patch (a
        repair: the plan is free to name its own actions, recon's list is its advice)."""
        problems = [f"{a} {wrong}" for a in names if (wrong := action_problem(a)) is not None]
        seen: dict[tuple[str, ...], str] = {}
        keep: list[str] = []
        for a in names:
            first = seen.setdefault(same_action(a), a)
            if first != a:
                problems.append(f"{a} repeats {first}")
            elif action_problem(a) is None:
                keep.append(a)
        if not problems:
            return GuardResult.ok(self.name)
        patch = [{"op": "replace", "path": "/actions", "value": keep}] if keep else None
        return GuardResult.fail("; ".join(problems), self.name, patch=patch)

    def _insufficient(self, names: list[str]) -> GuardResult:
        """The listed actions cannot reach the goal: say which facts no listed action
        gives, the actions to add, and (when they fit) add them as a patch."""
        assert self.problem is not None
        wanted = wanted_facts(self.problem, names)
        unreached = [g for g in self.problem.goal if g not in closure(self.problem, names)]
        text = (
            f"the listed actions cannot reach goal fact(s) {_set(unreached)} from the initial "
            f"facts: no listed action gives {_set(wanted)}"
        )
        adds = missing_actions(self.problem, names)
        if not adds:
            return GuardResult.fail(text, self.name)
        gave = "; ".join(f"{a} gives {_effects(self.problem, a)}" for a in adds)
        fix = f"{text}. Fix: also list {', '.join(adds)} ({gave})"
        fits = len(dict.fromkeys(names)) + len(adds) <= MAX_LISTED
        patch = [{"op": "add", "path": "/actions/-", "value": a} for a in adds] if fits else None
        return GuardResult.fail(fix, self.name, patch=patch)


@dataclass
class StrategyGuard:
    """One named approach with a rationale; its order uses only recon's actions and, run
    in sequence from the initial facts, meets every action's needs and reaches the goal
    (for a free task, with no facts to run it on: the names only).

    The order's vocabulary is also a constraint (`constraint`: only recon's actions), and
    an order that some arrangement of its actions — with any recon listed that it lacks —
    would make run comes back with that arrangement as a patch."""

    problem: PlanProblem | None
    name: str = "strategy"

    def constraint(self, context: Context) -> dict[str, Any] | None:
        """The order may name only the actions recon listed (when recon ran)."""
        found = recon_actions(earlier(context, "recon"))
        if not found:
            return None
        return {"properties": {"order": {"items": {"enum": list(dict.fromkeys(found))}}}}

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
        if self.problem is None:
            return GuardResult.ok(self.name)
        return self._runs(value, order, found)

    def _runs(
        self, value: dict[str, Any], order: list[str], found: list[str] | None
    ) -> GuardResult:
        """Run the order; when it does not run, say where and give the order that does."""
        assert self.problem is not None
        unmet, missing = run_order(self.problem, order)
        if not unmet and not missing:
            return GuardResult.ok(self.name)
        parts = [f"in the order, {u}, which no earlier action gives" for u in unmet]
        if missing:
            parts.append(f"the order ends without goal fact(s) {_set(missing)}")
        text = "; ".join(parts)
        fixed = runnable_order(self.problem, order, found)
        if fixed is None or len(fixed) > MAX_LISTED:
            return GuardResult.fail(text, self.name)
        patch = make_patch(value, {**value, "order": fixed})
        return GuardResult.fail(f"{text}. Fix: order {', '.join(fixed)}", self.name, patch=patch)
