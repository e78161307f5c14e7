"""Plan search (seed 000): analysis → recon → strategy → plan, searched with feedback.

    from guardsearch.apps.plan import plan_problem_sync
    plan_problem_sync("bug-login-empty-password", pipeline="search", model="embedded")

A plan is a contingent JSON DAG (`Plan`); guards at three levels judge it against
the problem's facts and actions, and their feedback steers the DFS (docs/plan.md).
Importing the package registers the app `plan` (guardsearch.registry).
"""

from guardsearch.apps.plan.app import APP
from guardsearch.apps.plan.guards import (
    LEVELS,
    ExpansivePlanGuard,
    MediumPlanGuard,
    MinimalPlanGuard,
    plan_guard,
)
from guardsearch.apps.plan.pipelines import (
    PIPELINES,
    Pipeline,
    backtrack_one_level,
    get_pipeline,
    retry_in_place,
)
from guardsearch.apps.plan.plan_format import (
    Plan,
    PlanStep,
    complete_plan,
    generation_schema,
    plan_schema,
)
from guardsearch.apps.plan.problems import (
    CATEGORIES,
    Action,
    PlanProblem,
    get_problem,
    load_problem_file,
    problems,
)
from guardsearch.apps.plan.reference import reference_plan
from guardsearch.apps.plan.report import backtracks, result_dict
from guardsearch.apps.plan.solve import (
    DEFAULT_BUDGET_CALLS,
    DEFAULT_PIPELINE,
    plan_problem,
    plan_problem_sync,
    plan_search,
    plan_space,
)
from guardsearch.apps.plan.space import SEARCH_BUDGETS, STEP_NAMES, PlanSpace, plan_step
from guardsearch.apps.plan.traces import MAX_EXPLORATIONS, explore, run_main_line

__all__ = [
    "APP",
    "CATEGORIES",
    "DEFAULT_BUDGET_CALLS",
    "DEFAULT_PIPELINE",
    "LEVELS",
    "MAX_EXPLORATIONS",
    "PIPELINES",
    "SEARCH_BUDGETS",
    "STEP_NAMES",
    "Action",
    "ExpansivePlanGuard",
    "MediumPlanGuard",
    "MinimalPlanGuard",
    "Pipeline",
    "Plan",
    "PlanProblem",
    "PlanSpace",
    "PlanStep",
    "backtrack_one_level",
    "backtracks",
    "complete_plan",
    "explore",
    "generation_schema",
    "get_pipeline",
    "get_problem",
    "load_problem_file",
    "plan_guard",
    "plan_problem",
    "plan_problem_sync",
    "plan_schema",
    "plan_search",
    "plan_space",
    "plan_step",
    "problems",
    "reference_plan",
    "result_dict",
    "retry_in_place",
    "run_main_line",
]
