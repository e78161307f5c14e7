"""Refining a free task's plan one step at a time: the model writes the step the verdict
asks for, code puts it in the plan.

Shown a whole plan and what is wrong with it, the embedded 0.5B mostly writes the same
plan again (the held-out offsite: four whole-plan refinements, each the best plan with
the same "one-day" missing; benchmarks/results/plan_free_notes.md). Asked for one step —
the step that handles a constraint no step addresses, or the one that replaces a step
the verdict names as vague, repeated or the whole task — it has a short, concrete job,
and code splices the answer in: in place of the faulty step, else as a new step before
the recovery steps. The edited plan is judged by the same guard and becomes the best
only when it scores higher.

The fixes, from the best plan's own findings (`fixes`): each faulty step in turn is
replaced by a step that also handles the next missing constraint, while there is one;
the constraints left over get new steps. A fix that did not raise the score is asked
once more, sampled (`TRIES_PER_FIX`), then the next fix is tried; after an improvement
the fixes are read again from the new best plan. Costs over a budget and a broken order
are not fixed here (the whole-plan refinement that follows may).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import ValidationError

from guardsearch.apps.plan.plan_format import MAX_STEPS, NAME_CHARS, Plan
from guardsearch.apps.plan.repair import fresh_id
from guardsearch.apps.plan.task_checks import (
    constraint_status,
    drop_copied_steps,
    faulty_steps,
    term_of,
)
from guardsearch.apps.plan.task_guards import TaskPlanGuard
from guardsearch.apps.plan.task_spec import Constraint, TaskSpec
from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.errors import BudgetExceeded, ParseError
from guardsearch.core.guard_result import Check, GuardResult
from guardsearch.core.messages import ModelRequest
from guardsearch.guards.parse import parse_json
from guardsearch.models.metered import Metered
from guardsearch.prompts import PromptTemplate

TRIES_PER_FIX = 2
STEP_TOKENS = 120
# How much a constrained detail says before and after the words it must contain: left
# open, the 0.5B wrote around them until its tokens ran out (a string never closed).
AROUND_TERM = 50
SAMPLED_TEMPERATURE = 0.7


@dataclass(frozen=True)
class Fix:
    """One edit to ask for: replace step `replace` (None: add a step), handling
    `constraint` (None: any concrete part of the task); `why` is the finding."""

    replace: str | None
    why: str
    constraint: Constraint | None

    def instruction(self) -> str:
        handles = ""
        if self.constraint is not None:
            handles = (
                f"It handles {self.constraint.describe()}: its detail says "
                f"{term_of(self.constraint)!r}."
            )
        if self.replace is None:
            return f"No step handles this yet. Write one new step for it. {handles}"
        what = handles or "It does one concrete part of the task that no other step does."
        return f"{self.why}. Write the step that replaces step {self.replace}. {what}"


def fixes(spec: TaskSpec, plan: Plan) -> list[Fix]:
    """The edits that would fix what the guard finds in `plan`, in the order tried."""
    missing = [c for c, ok, _ in constraint_status(spec, plan) if not ok]
    out = [
        Fix(step.id, why, missing[i] if i < len(missing) else None)
        for i, (step, why) in enumerate(faulty_steps(spec, plan))
    ]
    return out + [Fix(None, "", c) for c in missing[len(out) :]]


# A verb_object name (two words at least), as the `concrete` check asks.
ACTION_PATTERN = "^[a-z][a-z0-9]*_[a-z0-9_]+$"


def _literal(text: str) -> str:
    """`text` as a regular expression matching it: a special character as a one-character
    class (`[.]`), which every grammar converter reads (an escape like `\\.` not)."""
    return "".join(f"[{c}]" if c in ".$*+?(){}|" else c for c in text)


def step_schema(costs: bool, term: str | None = None) -> dict[str, Any]:
    """The edit's schema: one step whose action is verb_object and, when the fix is for
    a constraint, whose detail says `term` — the guard's finding compiled into the
    request, as a step's declared constraints are (guards/constraints.py), so a model
    that would not write the words it was asked for cannot leave them out."""
    detail: dict[str, Any] = {"type": "string", "minLength": 3, "maxLength": 100}
    if term and not set(term) & set('"\\^[]'):
        any_text = '[^"\\\\]{0,' + str(AROUND_TERM) + "}"
        detail = {"type": "string", "pattern": f"^{any_text}{_literal(term)}{any_text}$"}
    properties: dict[str, Any] = {
        "action": {"type": "string", "pattern": ACTION_PATTERN, "maxLength": NAME_CHARS},
        "detail": detail,
    }
    if costs:
        properties["cost"] = {"type": "integer", "minimum": 0}
    return {
        "type": "object",
        "properties": properties,
        "required": ["action", "detail"],
        "additionalProperties": False,
    }


def splice(value: dict[str, Any], fix: Fix, answer: dict[str, Any]) -> dict[str, Any] | None:
    """`value` with the answered step put in (None: no room, or not a step)."""
    if not isinstance(answer.get("action"), str) or not isinstance(answer.get("detail"), str):
        return None
    steps: list[dict[str, Any]] = [dict(s) for s in value["steps"]]
    new: dict[str, Any] = {k: answer[k] for k in ("action", "detail", "cost") if k in answer}
    if fix.replace is not None:
        at = next(i for i, s in enumerate(steps) if s.get("id") == fix.replace)
        old = steps[at]
        steps[at] = {"id": fix.replace, **new, "retry_budget": old.get("retry_budget", 1)}
        if "on_failure" in old:
            steps[at]["on_failure"] = old["on_failure"]
        return {**value, "steps": steps}
    if len(steps) >= MAX_STEPS:
        return None
    recovery = {s.get("on_failure") for s in steps}
    at = next((i for i, s in enumerate(steps) if s.get("id") in recovery), len(steps))
    ident = fresh_id(Plan.model_validate(value))
    steps.insert(at, {"id": ident, **new, "retry_budget": 1})
    return {**value, "steps": steps}


@dataclass
class StepRefiner:
    """Edits the best plan step by step within the calls `model`'s budget leaves."""

    spec: TaskSpec
    objective: Context
    model: Metered
    guard: TaskPlanGuard
    best_value: dict[str, Any]
    best_verdict: GuardResult
    tree: list[dict[str, Any]] = field(default_factory=list)
    calls: int = 0

    def _left(self) -> bool:
        left = self.model.budget.remaining().calls
        return left is None or left > 0

    async def run(self, max_calls: int) -> None:
        template = PromptTemplate.packaged("plan_free_step")
        costs = self.spec.budget is not None
        minimal = any(c.name == "minimal" and c.passed for c in self.best_verdict.checks)
        if not minimal:  # a plan the Minimal guard rejects is no plan to edit step by step
            return
        while self.calls < max_calls and self._left() and not self.best_verdict.passed:
            try:
                plan = Plan.model_validate(self.best_value)
            except ValidationError:
                return
            todo = fixes(self.spec, plan)
            if not todo or not await self._try_fixes(todo, template, costs, max_calls):
                return

    async def _try_fixes(
        self, todo: list[Fix], template: PromptTemplate, costs: bool, max_calls: int
    ) -> bool:
        """Ask for each fix in turn until one raises the score (True) or none does."""
        for fix in todo:
            for attempt in range(TRIES_PER_FIX):
                if self.calls >= max_calls or not self._left():
                    return False
                try:
                    if await self._one(fix, attempt, template, costs):
                        return True
                except BudgetExceeded:  # a token or time cap, not the calls
                    return False
        return False

    async def _one(self, fix: Fix, attempt: int, template: PromptTemplate, costs: bool) -> bool:
        messages = template.render(
            self.objective,
            plan=json.dumps(self.best_value["steps"], ensure_ascii=False),
            instruction=fix.instruction(),
            costs=costs,
        )
        request = ModelRequest(
            messages=messages,
            temperature=0.0 if attempt == 0 else SAMPLED_TEMPERATURE,
            seed=self.calls,
            max_tokens=STEP_TOKENS,
            json_schema=step_schema(costs, term_of(fix.constraint) if fix.constraint else None),
        )
        self.calls += 1
        ident = f"refine:e{self.calls}"
        completion = await self.model.complete(request, step="plan", node=ident)
        try:
            answer = parse_json(completion.text)
        except ParseError as exc:
            self._record(ident, fix, None, f"not a step: {exc}")
            return False
        edited = splice(self.best_value, fix, answer) if isinstance(answer, dict) else None
        if edited is None:
            self._record(ident, fix, None, "not a step that fits the plan")
            return False
        edited, notes = drop_copied_steps(edited)
        verdict = await self.guard.check(
            Artifact(id=ident, step="plan", text=json.dumps(edited), value=edited),
            self.objective,
        )
        if notes:  # said as the search's plans say it (space.py)
            said = Check(name="repaired", passed=True, detail="; ".join(notes))
            verdict = replace(verdict, checks=(*verdict.checks, said))
        self._record(ident, fix, verdict, verdict.feedback)
        if (verdict.passed, verdict.score or 0.0) > (False, self.best_verdict.score or 0.0):
            self.best_value, self.best_verdict = edited, verdict
            return True
        return False

    def _record(self, ident: str, fix: Fix, verdict: GuardResult | None, feedback: str) -> None:
        self.tree.append(
            {
                "id": ident,
                "parent": None,
                "step": "plan",
                "attempt": self.calls,
                "passed": bool(verdict and verdict.passed),
                "status": "goal" if verdict and verdict.passed else "failed",
                "feedback": feedback,
                "fix": fix.instruction(),
            }
        )
