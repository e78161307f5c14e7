"""The plan pipelines as an experiment suite (docs/plan.md) for `guardsearch.experiments`.

Problems: None or "all" (every shipped problem), a list of ids, or a dict
`{"categories": [...], "per_category": n, "ids": [...]}` (the first n of each category).
Methods: the pipelines `single`, `classify-then-plan`, `full`, `search`, `search-blind`;
options go to `plan_search` (`guard_level`, `heuristic`, `temperature`, ...).

Every pipeline is seeded (seed = trial), so a run at budget B is the run at a larger
budget cut at B calls: pass rates at smaller budgets are read off one run at the
largest (`deterministic` is True). Identical requests within a process are answered
from one in-memory cache (`CachedModel` over a `DictCache`): `full` and `search` share
their first four calls, `search` and `search-blind` every call up to their first
failure, and each is paid once. A cached answer keeps its original usage, so budgets,
call counts and token figures are what they would have been without it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from guardsearch.apps.plan.pipelines import PIPELINES
from guardsearch.apps.plan.problems import CATEGORIES, PlanProblem, get_problem, problems
from guardsearch.apps.plan.report import backtracks
from guardsearch.apps.plan.solve import plan_search
from guardsearch.core.errors import ConfigError
from guardsearch.experiments.suite import MethodSpec, Problem
from guardsearch.models.base import Model
from guardsearch.models.cache import CachedModel, DictCache
from guardsearch.models.metered import Metered


def select(selector: Any) -> list[PlanProblem]:
    """Shipped problems for a selector (see the module docstring)."""
    if selector is None or selector == "all":
        return list(problems())
    if isinstance(selector, str):
        selector = [s.strip() for s in selector.split(",") if s.strip()]
    if isinstance(selector, list):
        return [get_problem(str(i)) for i in selector]
    if not isinstance(selector, dict):
        raise ConfigError(f"plan problems: 'all', a list of ids or a dict, got {selector!r}")
    unknown = set(selector) - {"categories", "per_category", "ids"}
    if unknown:
        raise ConfigError(f"plan problems: unknown keys {sorted(unknown)}")
    if "ids" in selector:
        return select(list(selector["ids"]))
    categories = selector.get("categories") or list(CATEGORIES)
    bad = set(categories) - set(CATEGORIES)
    if bad:
        raise ConfigError(f"plan problems: unknown categories {sorted(bad)}")
    per = selector.get("per_category")
    chosen: list[PlanProblem] = []
    for category in categories:
        pool = [p for p in problems() if p.category == category]
        chosen += pool[: int(per)] if per is not None else pool
    return chosen


class PlanSuite:
    """Suite protocol for the plan pipelines (see `guardsearch.experiments.suite`)."""

    name = "plan"

    def __init__(self, *, memo: bool = True) -> None:
        self.memo = memo
        self._memos: dict[int, CachedModel] = {}

    def problems(self, selector: Any) -> list[Problem]:
        return [
            Problem(id=p.id, input=p.id, meta={"category": p.category}) for p in select(selector)
        ]

    def method_names(self) -> list[str]:
        return list(PIPELINES)

    def deterministic(self, method: MethodSpec) -> bool:
        return True

    def _model(self, model: Metered) -> Metered:
        if not self.memo:
            return model
        inner: Model = model.inner
        memo = self._memos.get(id(inner))
        if memo is None:
            memo = self._memos[id(inner)] = CachedModel(inner, DictCache())
        return dataclasses.replace(model, inner=memo)

    async def run(
        self, method: MethodSpec, problem: Problem, model: Metered, trial: int
    ) -> dict[str, Any]:
        the_problem = get_problem(str(problem.input))
        options = dict(method.options)
        options.setdefault("seed", trial)
        result = await plan_search(
            the_problem, pipeline=method.method, model=self._model(model), **options
        )
        found = backtracks(result)
        return {
            "succeeded": result.succeeded,
            "termination": result.termination,
            "answer": result.answer if result.succeeded else None,
            "backtracks": [b["depth"] for b in found],
            "category": the_problem.category,
            "backtrack_steps": [[b["from"], b["to"], b["depth"]] for b in found],
            "path": [n.step for n in result.path[1:]],
        }


suite = PlanSuite()
