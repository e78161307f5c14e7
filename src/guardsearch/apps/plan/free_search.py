"""A free task's search: the single-shot plan is its root, then it improves the best plan.

Three phases, one budget:

1. **root** — the `single` pipeline's plan step, the same requests, seeds and
   temperatures, `ROOT_ATTEMPTS` attempts retried in place with the guard's feedback.
   So the search holds the single-shot candidate and never returns a plan the task
   guard ranks below it.
2. **edit** — up to `EDIT_CALLS` step edits of the best plan (free_refine.py): the model
   writes the one step a finding asks for (a step for a constraint no step addresses,
   or the replacement of a step the verdict names as vague, repeated or the whole
   task), code splices it in, and the edited plan replaces the best when the same
   guard scores it higher.
3. **refine** — with the calls left, the whole plan again, its prompt showing the best
   plan judged so far (`TaskPlanGuard`'s score: most constraints addressed, then fewest
   vague or repeated steps) with what its verdict says is wrong, and the plans the root
   tried with theirs; a new plan replaces the best when it scores higher.

The best plan of any phase is returned (the earliest phase's on a tie), with its
verdicts; `succeeded` only when it passed. Why not the four-step pipeline (analysis,
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

from guardsearch.apps.plan.free_refine import StepRefiner
from guardsearch.apps.plan.pipelines import PIPELINES, retry_in_place
from guardsearch.apps.plan.report import best_path, result_dict
from guardsearch.apps.plan.space import PlanSpace
from guardsearch.apps.plan.task_guards import TaskPlanGuard, verdicts
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
# Step edits at the most (free_refine.py), then whole-plan refinements with what is
# left (REFINE_ATTEMPTS when the budget sets no call limit).
EDIT_CALLS = 6
REFINE_ATTEMPTS = 6
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
    (each phase's calls, best score and whether it won; the root's own outcome)."""
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
    out = _Phases(first, seconds)
    best = _best(first)
    if first.succeeded or not _calls_left(metered) or best is None or best.verdict is None:
        return out.payload()
    edits = await _edit(root, spec or TaskSpec(task=task), metered, best.value, best.verdict)
    out.edits = edits
    if edits.best_verdict.passed or not _calls_left(metered):
        return out.payload()
    refine = cast(RefineSpace, _space(RefineSpace, task, spec, _refine_rmax(metered), **build))
    objective = refine.root().context
    for tried in _tried(first):
        objective = objective.amend(tried=tried)
    refine.objective = objective
    refine.remember(edits.best_value, edits.best_verdict)
    out.refine = await search(refine, "dfs", model=metered, heuristic=retry_in_place, **options)
    return out.payload()


def _calls_left(metered: Metered) -> bool:
    left = metered.budget.remaining().calls
    return left is None or left > 0


def _refine_rmax(metered: Metered) -> int:
    return metered.budget.remaining().calls or REFINE_ATTEMPTS


async def _edit(
    root: PlanSpace, spec: TaskSpec, metered: Metered, value: Any, verdict: GuardResult
) -> StepRefiner:
    """Step edits of the root's best plan (free_refine.py), up to EDIT_CALLS calls."""
    guard = cast(TaskPlanGuard, root.steps[0].guard)
    edits = StepRefiner(
        spec=spec,
        objective=root.root().context,
        model=metered,
        guard=guard,
        best_value=value,
        best_verdict=verdict,
    )
    await edits.run(EDIT_CALLS)
    return edits


@dataclass
class _Phases:
    """The phases' results, merged into one payload: the best plan of any phase (the
    earliest on a tie), with its verdicts; the calls, tokens and trees of all."""

    root: SearchResult
    root_seconds: float
    edits: StepRefiner | None = None
    refine: SearchResult | None = None

    def payload(self) -> dict[str, Any]:
        one = result_dict(self.root)
        best_one = _best(self.root)
        phases = [_phase("root", self.root.calls, best_one.verdict if best_one else None)]
        phases[0] |= {k: one[k] for k in ("succeeded", "termination", "plan", "verdicts")}
        phases[0]["seconds"] = self.root_seconds
        candidates: list[tuple[tuple[bool, float], dict[str, Any]]] = [
            (rank(best_one.verdict if best_one else None), one)
        ]
        tree = list(one["tree"])
        calls, tokens, expansions, termination = one["calls"], one["tokens"], 0, one["termination"]
        if self.edits is not None:
            e = self.edits
            phases.append(_phase("edit", e.calls, e.best_verdict))
            candidates.append((rank(e.best_verdict), _edit_payload(e)))
            tree += e.tree
            calls += e.calls
            termination = "success" if e.best_verdict.passed else "budget_exhausted"
        if self.refine is not None:
            two = result_dict(self.refine)
            best_two = _best(self.refine)
            verdict_two = best_two.verdict if best_two else None
            phases.append(_phase("refine", self.refine.calls, verdict_two))
            candidates.append((rank(verdict_two), two))
            tree += [_prefixed(n) for n in two["tree"]]
            calls, tokens = calls + two["calls"], tokens + two["tokens"]
            expansions, termination = two["expansions"], two["termination"]
        won = max(range(len(candidates)), key=lambda i: (candidates[i][0], -i))
        phases[won]["won"] = True
        chosen = candidates[won][1]
        return (
            one
            | {k: chosen[k] for k in ("succeeded", "plan", "verdicts", "path")}
            | {
                "termination": "success" if chosen["succeeded"] else termination,
                "calls": calls,
                "tokens": tokens if self.edits is None else self._tokens(),
                "expansions": one["expansions"] + expansions,
                "tree": tree,
                "phases": phases,
            }
        )

    def _tokens(self) -> int:
        # The step edits call the model outside a search: the meter has every call's.
        metered = self.edits.model if self.edits is not None else None
        return metered.usage.total_tokens if metered is not None else 0


def _edit_payload(edits: StepRefiner) -> dict[str, Any]:
    text = json.dumps(edits.best_value, ensure_ascii=False)
    return {
        "succeeded": edits.best_verdict.passed,
        "plan": edits.best_value,
        "verdicts": verdicts(edits.best_verdict),
        "path": [
            {
                "step": "plan",
                "passed": edits.best_verdict.passed,
                "text": text[:200],
                "feedback": edits.best_verdict.feedback,
            }
        ],
    }


def _phase(name: str, calls: int, verdict: GuardResult | None) -> dict[str, Any]:
    score = verdict.score if verdict is not None else None
    return {"phase": name, "calls": calls, "best_score": score, "won": False}


def _prefixed(node: dict[str, Any]) -> dict[str, Any]:
    return node | {
        "id": f"refine:{node['id']}",
        "parent": f"refine:{node['parent']}" if node.get("parent") else node.get("parent"),
    }
