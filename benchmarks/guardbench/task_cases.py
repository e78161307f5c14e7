"""Labelled cases for the free-task guards, from the 44 free tasks and their hand-written
constraints (free_tasks.py; benchmarks/data/plan_free_tasks.yaml).

- `plan-task` (apps/plan/task_guards.py TaskPlanGuard, with the spec code reads from the
  task's text): plans built from the hand-written constraints. The label is the
  hand-written judgement (free_tasks.judge): every constraint addressed (a budget's
  costs within it), no repeated step, no stated order broken — plus, for the
  `noun-step` shape, a step that is a bare noun, wrong by construction. Right shapes:
  one step per constraint in the constraint's first wording (`first-wording`) or its
  last (`last-wording`: "twelve", "2k", "full day"...), all constraints packed into two
  details (`packed`), costs within the budget (`costs-within`). Wrong shapes: one
  constraint left out (`drop-one`), a step done twice (`repeat`), a bare-noun step
  (`noun-step`), costs over the budget (`over-budget`), a number off by one
  (`number-off`), a stated order reversed (`order-reversed`).
- `plan-task-analysis` (apps/plan/step_guards.py AnalysisGuard with the spec): the
  analysis's class; right when it is the task's hand-written kind.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from guardbench.cases import Case, balanced
from guardbench.free_tasks import judge, split_of, tasks
from guardsearch.apps.plan.step_guards import AnalysisGuard
from guardsearch.apps.plan.task_extract import extract_spec
from guardsearch.apps.plan.task_guards import TaskPlanGuard
from guardsearch.apps.plan.task_spec import TASK_KINDS
from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context

SEED = 4435
VERBS = ("confirm", "book", "arrange", "prepare", "schedule", "check", "buy", "write")
Steps = list[dict[str, Any]]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z]+", "_", text.lower()).strip("_")[:20] or "item"


def _step(i: int, action: str, detail: str, **extra: Any) -> dict[str, Any]:
    return {"id": f"s{i}", "action": action, "detail": detail, "retry_budget": 1, **extra}


def _ordered(task: dict[str, Any], steps: Steps) -> Steps:
    """`steps` with a step for each side of every stated order, in that order, first."""
    out: Steps = []
    for dep in task.get("order", []):
        for phrase in (dep["before"], dep["after"]):
            action = _slug(phrase)
            if all(s["action"] != action for s in out):
                out.append({"action": action, "detail": f"{phrase} carefully"})
    return [*out, *steps]


def one_per_constraint(task: dict[str, Any], pick: int) -> Steps:
    steps = [
        {
            "action": f"{VERBS[n % len(VERBS)]}_{_slug(c['id'])}_part",
            "detail": f"{c['any'][pick]} as the task asks",
        }
        for n, c in enumerate(task["constraints"])
    ]
    return _numbered(_ordered(task, steps))


def _numbered(steps: Steps) -> Steps:
    return [_step(i, s["action"], s["detail"], **{k: v for k, v in s.items() if k not in (
        "action", "detail")}) for i, s in enumerate(steps, 1)]  # fmt: skip


def packed(task: dict[str, Any]) -> Steps:
    alts = [c["any"][0] for c in task["constraints"]]
    half = (len(alts) + 1) // 2
    steps = [
        {"action": "gather_requirements", "detail": "list what is needed and who helps"},
        {"action": "settle_first_part", "detail": ", ".join(alts[:half]) + " as agreed"},
        {"action": "settle_second_part", "detail": ", ".join(alts[half:]) + " as agreed"},
    ]
    return _numbered(_ordered(task, steps))


def with_costs(steps: Steps, total: float) -> Steps:
    out = [dict(s) for s in steps]
    out[0]["cost"] = round(total * 0.6)
    out[-1]["cost"] = round(total * 0.4)
    return out


def _bump(text: str) -> str | None:
    match = re.search(r"\d+", text)
    return None if match is None else text.replace(match.group(0), str(int(match.group(0)) + 1))


def shapes(task: dict[str, Any], rng: random.Random) -> dict[str, Steps]:
    """Every shape that applies to `task`: name → steps."""
    out = {
        "first-wording": one_per_constraint(task, 0),
        "last-wording": one_per_constraint(task, -1),
        "packed": packed(task),
    }
    budget = next((c for c in task["constraints"] if "max_cost" in c), None)
    base = out["first-wording"]
    if budget is not None:
        out["costs-within"] = with_costs(base, budget["max_cost"] * 0.9)
        out["over-budget"] = with_costs(base, budget["max_cost"] * 1.3)
    cons = task["constraints"]
    dropped = cons[rng.randrange(len(cons))]["id"]
    out["drop-one"] = _numbered([s for s in base if _slug(dropped) not in s["action"]])
    twice = dict(rng.choice(base), detail="once more, to be sure")
    out["repeat"] = _numbered([*base, twice])
    nouns = [dict(s) for s in base]
    nouns[rng.randrange(len(nouns))]["action"] = rng.choice(["budget", "people", "logistics"])
    out["noun-step"] = _numbered(nouns)
    numeric = [s for s in base if _bump(s["detail"]) and re.search(r"\d", s["detail"])]
    if numeric:
        pick = rng.choice(numeric)
        out["number-off"] = [dict(s, detail=_bump(s["detail"])) if s is pick else s for s in base]
    if task.get("order"):
        first, then, *rest = base
        out["order-reversed"] = _numbered([then, first, *rest])
    return out


def label(task: dict[str, Any], shape: str, steps: Steps) -> str:
    if shape == "noun-step":
        return "fail"  # wrong by construction: a step that is a bare noun
    verdict = judge(task, {"steps": steps})
    right = verdict["coverage"] == 1.0 and not verdict["repeats"] and not verdict["order_broken"]
    return "pass" if right else "fail"


def task_plan_cases() -> list[Case]:
    rng = random.Random(SEED)
    out = []
    halves = split_of(tasks())
    for task in tasks():
        for shape, steps in shapes(task, rng).items():
            out.append(
                Case(
                    guard="plan-task",
                    id=f"{task['id']}-{shape}",
                    label=label(task, shape, steps),  # type: ignore[arg-type]
                    shape=shape,
                    input={"task": task["task"], "plan": {"steps": steps}},
                    split=halves[task["id"]],  # type: ignore[arg-type]
                )
            )
    # As many right plans as wrong ones (every guard set is balanced), spread over the
    # shapes; each case keeps its task's half.
    passing = [c for c in out if c.label == "pass"]
    failing = [c for c in out if c.label == "fail"]
    return balanced(passing, failing, min(len(passing), len(failing)), rng)


def analysis_cases() -> list[Case]:
    rng = random.Random(SEED + 1)
    out = []
    halves = split_of(tasks())
    for task in tasks():
        wrong = rng.choice([k for k in TASK_KINDS if k != task["kind"]])
        for shape, kind in (("hand-written-kind", task["kind"]), ("another-kind", wrong)):
            out.append(
                Case(
                    guard="plan-task-analysis",
                    id=f"{task['id']}-{shape}",
                    label="pass" if kind == task["kind"] else "fail",
                    shape=shape,
                    input={
                        "task": task["task"],
                        "value": {"problem_class": kind, "key_facts": ["task_done"]},
                    },
                    split=halves[task["id"]],  # type: ignore[arg-type]
                )
            )
    return out


def _artifact(step: str, value: Any) -> Artifact:
    return Artifact(id=step, step=step, text=json.dumps(value), value=value)


async def judge_plan(case: Case) -> bool:
    guard = TaskPlanGuard(None, spec=extract_spec(case.input["task"]))
    verdict = await guard.check(
        _artifact("plan", case.input["plan"]), Context(objective=case.input["task"])
    )
    return verdict.passed


async def judge_analysis(case: Case) -> bool:
    guard = AnalysisGuard(None, extract_spec(case.input["task"]))
    verdict = await guard.check(
        _artifact("analysis", case.input["value"]), Context(objective=case.input["task"])
    )
    return verdict.passed
