"""The pipelines the plan experiment compares, each a DFS over a `PlanSpace`.

| pipeline             | steps                              | on a failure                  |
|----------------------|------------------------------------|-------------------------------|
| `single`             | plan                               | retry the plan with feedback  |
| `classify-then-plan` | analysis → plan                    | retry in place, never go back |
| `full`               | analysis → recon → strategy → plan | retry in place, never go back |
| `search`             | analysis → recon → strategy → plan | heuristic: retry or go up d   |
| `search-blind`       | analysis → recon → strategy → plan | always go up one level        |

The linear pipelines run the same DFS with a backtrack budget of 0 and a heuristic
that always retries in place: each step gets its `rmax` attempts and the run ends
when one step runs out (forward only). `search` reads the plan guards' fix with the steps'
outputs and goes where that fix can be made (`FixHeuristic`, heuristic `fixes`; the
search's plain rule table is `rules`; `model` asks the model when no rule matches,
each a selectable `heuristic`); `search-blind` reads
no feedback to decide where to go — it always goes up one level (retrying in place
only at the first step, which has nothing above it) — which is what the experiment's
"heuristic vs blind DFS" comparison measures.
"""

from __future__ import annotations

from dataclasses import dataclass

from guardsearch.apps.plan.heuristic import FixHeuristic
from guardsearch.apps.plan.problems import PlanProblem
from guardsearch.apps.plan.space import SEARCH_BUDGETS, STEP_NAMES
from guardsearch.core.budget import StepBudget
from guardsearch.core.errors import ConfigError
from guardsearch.search.heuristic import Failure, Heuristic, ModelHeuristic, RuleHeuristic


def retry_in_place(failure: Failure) -> int:
    """Never backtrack: the linear pipelines' heuristic."""
    return 0


def backtrack_one_level(failure: Failure) -> int:
    """Blind DFS: always go up one level, whatever the feedback says."""
    return 1


HEURISTICS = ("fixes", "rules", "model", "blind")
# A free task's plan is retried in place until the same feedback came this often (then
# the rule table's escalation sends it up): its feedback names the plan's own steps.
FREE_ESCALATE_AFTER = 4


def make_heuristic(name: str, problem: PlanProblem | None = None) -> Heuristic:
    """The heuristic called `name`; `fixes` needs the problem (for a free task, which
    has no action catalogue for a fix to name, it is the plain rule table, escalating
    only after FREE_ESCALATE_AFTER identical failures)."""
    if name == "fixes":
        if problem is None:
            return RuleHeuristic(escalate_after=FREE_ESCALATE_AFTER)
        return FixHeuristic(problem)
    if name == "rules":
        return RuleHeuristic()
    if name == "model":
        return ModelHeuristic()
    if name == "blind":
        return backtrack_one_level
    raise ConfigError(f"unknown heuristic {name!r}; choose one of {', '.join(HEURISTICS)}")


@dataclass(frozen=True)
class Pipeline:
    name: str
    steps: tuple[str, ...]
    backtracking: bool
    heuristic: str = "fixes"

    def budgets(self) -> dict[str, StepBudget]:
        budgets = {s: SEARCH_BUDGETS[s] for s in self.steps}
        if self.backtracking:
            return budgets
        return {s: StepBudget(rmax=b.rmax, backtrack_budget=0) for s, b in budgets.items()}

    def heuristic_for(
        self, override: str | Heuristic | None = None, problem: PlanProblem | None = None
    ) -> Heuristic:
        """The pipeline's heuristic for `problem`; `override` (a name or any callable)
        replaces it in the pipelines that backtrack."""
        if not self.backtracking:
            return retry_in_place
        if override is not None and not isinstance(override, str):
            return override
        return make_heuristic(override or self.heuristic, problem)


PIPELINES: dict[str, Pipeline] = {
    p.name: p
    for p in (
        Pipeline("single", ("plan",), backtracking=False),
        Pipeline("classify-then-plan", ("analysis", "plan"), backtracking=False),
        Pipeline("full", STEP_NAMES, backtracking=False),
        Pipeline("search", STEP_NAMES, backtracking=True, heuristic="fixes"),
        Pipeline("search-blind", STEP_NAMES, backtracking=True, heuristic="blind"),
    )
}


def get_pipeline(name: str) -> Pipeline:
    try:
        return PIPELINES[name]
    except KeyError:
        raise ConfigError(
            f"unknown pipeline {name!r}; choose one of {', '.join(PIPELINES)}"
        ) from None
