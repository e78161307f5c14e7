"""A free task's search: the single-shot plan is its root, then it refines the best plan.

Two phases, one budget:

1. **root** — the `single` pipeline's plan step, the same requests, seeds and
   temperatures, `ROOT_ATTEMPTS` attempts retried in place with the guard's feedback.
   So the search holds the single-shot candidate and never returns a plan the task
   guard ranks below it.
2. **refine** — while calls remain, the plan step again, its prompt now showing the
   best plan judged so far (`TaskPlanGuard`'s score: most constraints addressed, then
   fewest vague or repeated steps) with what its verdict says is wrong, and the plans
   already tried with theirs. Each new plan is judged by the same guard and replaces the
   best when it scores higher, so every refinement starts from the fullest plan so far
   rather than from the last (a worse retry does not lose what an earlier one had).

The plan of the phase whose best scores higher is returned (the root's on a tie), with
its verdicts; `succeeded` only when it passed. Why not the four-step pipeline (analysis,
recon, strategy, plan) the `search` of a shipped problem runs: a free task's guard
judges the plan's own steps, which nothing upstream fixes, and on the free-task
evaluation the upstream outputs spent most of the calls and pulled the small model's
plans off the task (software deployment steps for an offsite;
benchmarks/results/plan_free_notes.md). That pipeline stays available as `full`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, cast

from guardsearch.apps.plan.pipelines import PIPELINES, retry_in_place
from guardsearch.apps.plan.report import best_path, result_dict
from guardsearch.apps.plan.space import PlanSpace
from guardsearch.apps.plan.task_spec import TaskSpec
from guardsearch.core.budget import Budget, BudgetLike
from guardsearch.core.context import Context
from guardsearch.core.events import Trace
from guardsearch.core.guard_result import GuardResult
from guardsearch.core.messages import ModelRequest
from guardsearch.models.base import Model
from guardsearch.models.metered import Metered
from guardsearch.search.node import Node
from guardsearch.search.result import SearchResult
from guardsearch.search.run import search
from guardsearch.search.space import Proposal

# The root's attempts: what the `single` pipeline makes within the evaluation's 3 calls.
ROOT_ATTEMPTS = 3
# Refinements when the budget sets no call limit.
REFINE_ATTEMPTS = 9
_PLAN_KEYS = ("id", "action", "detail", "cost", "on_failure")


def plan_text(value: Any) -> str:
    """A plan as the compact JSON a prompt shows (the fields a free plan's steps use)."""
    steps = value.get("steps") if isinstance(value, dict) else None
    if not isinstance(steps, list):
        return json.dumps(value, ensure_ascii=False)
    shown = [
        {k: s[k] for k in _PLAN_KEYS if k in s and s[k] is not None} if isinstance(s, dict) else s
        for s in steps
    ]
    return json.dumps({"steps": shown}, ensure_ascii=False)


def rank(verdict: GuardResult | None) -> tuple[bool, float]:
    """How good a judged plan is: passed first, then the guard's score."""
    if verdict is None:
        return (False, -1.0)
    return (verdict.passed, verdict.score or 0.0)


@dataclass(kw_only=True)
class RefineSpace(PlanSpace):
    """A free task's plan step whose prompt carries the best plan judged so far and what
    its verdict says is wrong (template variables `best_plan`, `best_feedback`)."""

    best_value: Any = None
    best_verdict: GuardResult | None = None

    def remember(self, value: Any, verdict: GuardResult | None) -> None:
        if value is not None and rank(verdict) > rank(self.best_verdict):
            self.best_value, self.best_verdict = value, verdict

    async def evaluate(self, node: Node, proposal: Proposal, context: Context) -> GuardResult:
        verdict = await super().evaluate(node, proposal, context)
        self.remember(proposal.value, verdict)
        return verdict

    def request(
        self, node: Node, context: Context, *, seed: int, temperature: float
    ) -> ModelRequest:
        if self.best_value is not None and self.best_verdict is not None:
            self.variables = {
                "best_plan": plan_text(self.best_value),
                "best_feedback": self.best_verdict.feedback or "nothing",
            }
        return super().request(node, context, seed=seed, temperature=temperature)


def _best(result: SearchResult) -> Node | None:
    path = best_path(result)
    return path[-1] if path and path[-1].step == "plan" else None


def _tried(result: SearchResult) -> list[tuple[str, str]]:
    """The root's judged plans with their verdicts, oldest first."""
    return [
        (n.text, n.verdict.feedback or "passed")
        for n in result.tree
        if n.parent is not None and n.step == "plan" and n.verdict is not None
    ]


def _space(
    cls: type[PlanSpace], task: str, spec: TaskSpec | None, rmax: int, **build: Any
) -> PlanSpace:
    return cls.build(
        None,
        ("plan",),
        guard_level="task",
        task=task,
        budgets=PIPELINES["single"].budgets(),
        spec=spec,
        plan_rmax=rmax,
        **build,
    )


async def free_search(
    task: str,
    spec: TaskSpec | None,
    *,
    model: Model | Metered,
    budget: BudgetLike = None,
    trace: Trace | None = None,
    window: int | None = None,
    structural_repairs: bool = True,
    **options: Any,
) -> dict[str, Any]:
    """Search a plan for the free task `task` judged by `spec` (see the module
    docstring); `plan_problem`'s payload keys (`report.result_dict`'s), plus `phases`
    (each phase's calls, best score and whether it won)."""
    metered = (
        model
        if isinstance(model, Metered)
        else Metered(model, Budget.of(budget), trace if trace is not None else Trace())
    )
    build = {"window": window, "structural_repairs": structural_repairs}
    root = _space(PlanSpace, task, spec, ROOT_ATTEMPTS, **build)
    started = time.perf_counter()
    first = await search(root, "dfs", model=metered, heuristic=retry_in_place, **options)
    seconds = round(time.perf_counter() - started, 3)
    left = metered.budget.remaining().calls
    if first.succeeded or left == 0:
        return _merged(first, None, seconds)
    refine = cast(RefineSpace, _space(RefineSpace, task, spec, left or REFINE_ATTEMPTS, **build))
    objective = refine.root().context
    for tried in _tried(first):
        objective = objective.amend(tried=tried)
    refine.objective = objective
    best = _best(first)
    if best is not None:
        refine.remember(best.value, best.verdict)
    second = await search(refine, "dfs", model=metered, heuristic=retry_in_place, **options)
    return _merged(first, second, seconds)


def _merged(first: SearchResult, second: SearchResult | None, seconds: float) -> dict[str, Any]:
    """One payload from the two phases: the better phase's plan, path and verdicts; the
    calls, tokens, expansions and tree of both (the refine phase's node ids prefixed
    `refine:`). `phases[0]` also holds the root's own outcome (`succeeded`, `plan`,
    `verdicts`, `termination`, `seconds`): what the `single` pipeline returns for the
    same requests."""
    one = result_dict(first)
    best_one = _best(first)
    phases = [_phase("root", first, best_one)]
    phases[0] |= {k: one[k] for k in ("succeeded", "termination", "plan", "verdicts")}
    phases[0]["seconds"] = seconds
    if second is None:
        phases[0]["won"] = True
        return one | {"phases": phases}
    two = result_dict(second)
    best_two = _best(second)
    won = rank(best_two.verdict if best_two else None) > rank(
        best_one.verdict if best_one else None
    )
    phases.append(_phase("refine", second, best_two))
    phases[1 if won else 0]["won"] = True
    chosen = two if won else one
    steering = {
        k: one["steering"].get(k, 0) + two["steering"].get(k, 0)
        for k in ("outputs", "repeats", "repairs", "prevented")
    }
    steering["repeat_share"] = round(steering["repeats"] / (steering["outputs"] or 1), 4)
    return chosen | {
        "termination": "success" if chosen["succeeded"] else two["termination"],
        "calls": one["calls"] + two["calls"],
        "tokens": one["tokens"] + two["tokens"],
        "expansions": one["expansions"] + two["expansions"],
        "steering": steering,
        "backtracks": [],
        "tree": one["tree"] + [_prefixed(n) for n in two["tree"]],
        "phases": phases,
    }


def _phase(name: str, result: SearchResult, best: Node | None) -> dict[str, Any]:
    score = best.verdict.score if best is not None and best.verdict is not None else None
    return {"phase": name, "calls": result.calls, "best_score": score, "won": False}


def _prefixed(node: dict[str, Any]) -> dict[str, Any]:
    return node | {
        "id": f"refine:{node['id']}",
        "parent": f"refine:{node['parent']}" if node.get("parent") else node.get("parent"),
    }
