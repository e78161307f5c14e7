"""The plan guard of a free task: Minimal, then what the task's spec asks (task_spec.py).

A free task has no facts or actions to run a plan against, so it is judged by what
its text asks. After the Minimal checks, `TaskPlanGuard` checks, each with feedback that
names what is missing:

- **concrete**: each step is an action on an object — an action name of at least two
  words (verb and object, like `book_venue`), not a vague verb (`handle_x`), not the task
  restated (`organize_offsite` for "Organise an offsite ..."), with a detail that says
  what exactly (at least two words);
- **no repeats**: no two steps do the same action (normalised: `book_venue`,
  `book_the_venue` and `Book-Venues` are one);
- **constraints**: every constraint of the spec is addressed by at least one step (its
  words are in the step's action or detail); a budget also by steps that give costs,
  which must then add up to at most the budget;
- **order**: for each stated dependency, the first step doing `before` comes no later
  than the first step doing `after` (a step *does* a phrase when it has at least half
  its words).

Its score grades how far a failing plan got, constraints first: 0.34 + 0.66 × (the
constraints addressed + the rest's share) / (constraints + 1), where the rest is steps
neither vague nor repeated (0.4 each, the share of steps) and the order kept (0.2),
scaled below 1. One more constraint addressed therefore always outranks any gain in
the rest, so the best plan judged is the one that addresses most of what the task
asks, and among those the cleanest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from guardsearch.apps.plan.guards import Level, MinimalPlanGuard
from guardsearch.apps.plan.plan_format import Plan
from guardsearch.apps.plan.task_checks import (
    TaskView,
    concreteness,
    constraint_problems,
    order_problem,
    repeated,
)
from guardsearch.apps.plan.task_spec import TaskSpec
from guardsearch.core.context import Context
from guardsearch.core.guard_result import Check, GuardResult

TASK_CHECKS = ("concrete", "no_repeats", "constraints", "order")
_FLOOR = 0.34
# How much each of the other checks' share weighs in the part of a failing plan's score
# below one constraint (concrete, no_repeats, order): the constraints count whole.
REST_WEIGHTS = (0.4, 0.4, 0.2)


@dataclass
class TaskPlanGuard(MinimalPlanGuard):
    """Minimal, then the free task's spec: concrete steps, no repeats, every constraint
    addressed, the stated order kept (see the module docstring)."""

    spec: TaskSpec = field(default_factory=TaskSpec)
    name: str = "plan-task"
    level: ClassVar[Level] = "minimal"

    def known_actions(self, context: Context | None) -> tuple[tuple[str, ...], str] | None:
        """Any action name: recon's list is advice in the plan's prompt, not a limit (a
        free task's plan names its own verb_object actions, judged by `concrete`)."""
        return None

    def task_checks(self, plan: Plan) -> tuple[list[Check], list[str], float]:
        """Each check with what failed in it, all the feedback, and the share met."""
        view = TaskView.of(self.spec)
        vague = [p for p in (concreteness(s, view) for s in plan.steps) if p]
        repeats = repeated(plan)
        met, unmet = constraint_problems(self.spec, plan)
        order = [p for p in (order_problem(d, plan) for d in self.spec.order) if p]
        n_steps, n_cons, n_deps = len(plan.steps), len(self.spec.constraints), len(self.spec.order)
        rest = [
            1 - len(vague) / n_steps,
            1 - len(repeats) / n_steps,
            1 - len(order) / n_deps if n_deps else 1.0,
        ]
        kept = 0.99 * sum(w * x for w, x in zip(REST_WEIGHTS, rest, strict=True))
        share = (max(met, 0) + kept) / (n_cons + 1)
        details = [vague, repeats, unmet, order]
        checks = [
            Check(name=name, passed=not found, hard=True, detail="; ".join(found))
            for name, found in zip(TASK_CHECKS, details, strict=True)
        ]
        feedback = [p for found in details for p in found]
        return checks, feedback, share

    async def deeper(self, plan: Plan, context: Context) -> GuardResult:
        checks, feedback, share = self.task_checks(plan)
        all_checks = (Check(name="minimal", passed=True, hard=True), *checks)
        if not feedback:
            return GuardResult(passed=True, score=1.0, checks=all_checks, guard=self.name)
        return GuardResult(
            passed=False,
            feedback="; ".join(feedback),
            score=round(_FLOOR + (1 - _FLOOR) * share * 0.99, 4),
            checks=all_checks,
            guard=self.name,
        )


def verdicts(verdict: GuardResult | None) -> list[dict[str, Any]]:
    """A verdict's named checks as the output's `verdicts` (what passed, what failed
    and why)."""
    if verdict is None:
        return []
    rows = [{"check": c.name, "passed": c.passed, "detail": c.detail} for c in verdict.checks]
    if not verdict.passed and not any(not r["passed"] and r["detail"] for r in rows):
        rows.append(
            {"check": verdict.guard or "guard", "passed": False, "detail": verdict.feedback}
        )
    return rows
