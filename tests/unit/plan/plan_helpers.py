"""Helpers for the plan-app tests: good outputs per step and a scripted model by step."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from guardsearch import ModelRequest, ScriptedModel
from guardsearch.apps.plan import CATEGORIES, Plan, PlanProblem, get_problem, reference_plan

STEPS = ("analysis", "recon", "strategy", "plan")
A, R, S, P = STEPS
# How each step's prompt (its template file) introduces itself (not just "(strategy)":
# a failure summary in the context may say "A downstream step (strategy) failed").
_MARKERS = {
    "of 4 (analysis)": "analysis",
    "of 4 (reconnaissance)": "recon",
    "of 4 (strategy)": "strategy",
    "You are the planner": "plan",
}

# A problem with a risky step (deploy_fix may lose service_up; rollback_release recovers).
RISKY = "bug-login-empty-password"
# A problem without risky steps.
PLAIN = "bug-report-timezone"


def step_of(request: ModelRequest) -> str:
    system = request.messages[0].content
    for marker, step in _MARKERS.items():
        if marker in system:
            return step
    raise AssertionError(f"not a plan-pipeline prompt: {system[-300:]}")


def good_plan(problem: PlanProblem) -> dict[str, Any]:
    return reference_plan(problem).model_dump(exclude_none=True)


def good_outputs(problem: PlanProblem, take: int = 1) -> dict[str, str]:
    """An output per step that passes its guard; `take` varies the text (not the
    meaning), so a regenerated step is a new state rather than a duplicate."""
    plan = reference_plan(problem)
    actions = list(dict.fromkeys(s.action for s in plan.steps))
    shift = (take - 1) % len(actions)
    return {
        A: json.dumps(
            {
                "problem_class": CATEGORIES[(take - 1) % len(CATEGORIES)],
                "key_facts": list(problem.goal),
            }
        ),
        R: json.dumps({"actions": actions[shift:] + actions[:shift]}),
        S: json.dumps(
            {
                "approach": "fix then ship safely",
                "rationale": f"each step gives what the next one needs (take {take})",
                "order": [s.action for s in plan.main_line()],
            }
        ),
        P: json.dumps(good_plan(problem)),
    }


def plan_of(*actions: str, **on_failure: str) -> dict[str, Any]:
    """A plan doing `actions` in order (ids s1, s2, ...); `on_failure` maps ids to ids."""
    steps = []
    for i, action in enumerate(actions, start=1):
        step: dict[str, Any] = {"id": f"s{i}", "action": action, "retry_budget": 1}
        if f"s{i}" in on_failure:
            step["on_failure"] = on_failure[f"s{i}"]
        steps.append(step)
    return {"steps": steps}


def edited(plan: dict[str, Any], **changes: Any) -> str:
    """`plan` as JSON with top-level changes (e.g. steps=...)."""
    return json.dumps({**plan, **changes})


def out_of_order(problem: PlanProblem) -> str:
    """The good plan with its first two main steps swapped: a precondition fails, and
    putting the steps back in order repairs it (the guards return that patch)."""
    plan = good_plan(problem)
    steps = plan["steps"]
    steps[0], steps[1] = steps[1], steps[0]
    return json.dumps(plan)


def unsatisfiable(problem: PlanProblem) -> str:
    """The good plan without its first step, the rest of its main line reversed: the
    first step needs what a later one gives, and a need is given by no step, so no order
    of the plan's steps repairs it, and neither does putting back a step of the
    strategy's order (follow.py inserts only what no main-line step gives)."""
    plan = Plan.model_validate(good_plan(problem))
    recovery = plan.recovery_ids()
    main = [s for s in plan.main_line()[1:]]
    rest = [s for s in plan.steps if s.id in recovery]
    return json.dumps({"steps": [s.model_dump(exclude_none=True) for s in [*main[::-1], *rest]]})


def left_out(problem: PlanProblem) -> str:
    """The good plan without its first step: the next step's need is given by no step
    (no order helps); the strategy's order has the step, so the search puts it back."""
    plan = good_plan(problem)
    plan["steps"] = plan["steps"][1:]
    return json.dumps(plan)


def unreachable(problem: PlanProblem) -> str:
    """The good plan without its last main step: the goal is never given."""
    plan = Plan.model_validate(good_plan(problem))
    main = plan.main_line()
    kept = [s for s in plan.steps if s.id != main[-1].id]
    return json.dumps({"steps": [s.model_dump(exclude_none=True) for s in kept]})


def misstated(problem: PlanProblem, take: int = 1) -> str:
    """The good plan with its first step's effects misstated (no rule of the table matches the
    feedback: retried in place); `take` varies the text, not the feedback."""
    plan = good_plan(problem)
    plan["steps"][0]["effects"] = list(problem.goal)
    plan["steps"][-1]["retry_budget"] = take
    return json.dumps(plan)


def over_budget(problem: PlanProblem) -> str:
    plan = good_plan(problem)
    for s in plan["steps"]:
        s["retry_budget"] = problem.r_max
    return json.dumps(plan)


def without_recovery(problem: PlanProblem) -> str:
    """The good plan with its failure branches removed: a dead end."""
    plan = Plan.model_validate(good_plan(problem))
    recovery = plan.recovery_ids()
    steps = [
        {**s.model_dump(exclude_none=True, exclude={"on_failure"})}
        for s in plan.steps
        if s.id not in recovery
    ]
    return json.dumps({"steps": steps})


def recon_without_recovery(problem: PlanProblem) -> str:
    """Recon listing only the good plan's main-line actions: a dead end's fix then names
    an action recon did not list, so the plan guard cannot repair it by adding the
    recovery step (the plan may use only recon's actions)."""
    plan = Plan.model_validate(good_plan(problem))
    return json.dumps({"actions": list(dict.fromkeys(s.action for s in plan.main_line()))})


@dataclass
class ByStep:
    """Answers per step from queues; an empty queue answers the step's good output."""

    problem: PlanProblem
    answers: dict[str, list[str]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    cause: str = "strategy"  # what the model answers when asked which step caused a failure

    def __call__(self, request: ModelRequest) -> str:
        if "Decide which step caused the failure" in request.messages[0].content:
            self.calls.append("classify")
            return json.dumps({"cause": self.cause})
        step = step_of(request)
        self.calls.append(step)
        queue = self.answers.get(step)
        if queue:
            return queue.pop(0)
        return good_outputs(self.problem, self.calls.count(step))[step]

    def model(self) -> ScriptedModel:
        return ScriptedModel(self)


def by_step(problem_id: str = PLAIN, **answers: list[str]) -> ByStep:
    return ByStep(get_problem(problem_id), {k: list(v) for k, v in answers.items()})


async def judged_free(task: str, *steps: tuple[str, str]) -> tuple[bool, str]:
    """The free-task plan guard's verdict (passed, feedback) on a plan of (action, detail)
    steps, with the spec code reads from `task`."""
    from guardsearch import Artifact, Context
    from guardsearch.apps.plan.task_extract import extract_spec
    from guardsearch.apps.plan.task_guards import TaskPlanGuard

    plan = {"steps": [{"id": f"s{i}", "action": a, "detail": d, "retry_budget": 1}
                      for i, (a, d) in enumerate(steps, 1)]}  # fmt: skip
    verdict = await TaskPlanGuard(None, spec=extract_spec(task)).check(
        Artifact(id="p", step="plan", text=json.dumps(plan), value=plan), Context(objective=task)
    )
    return verdict.passed, verdict.feedback or ""
