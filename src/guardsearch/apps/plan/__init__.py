"""Plan search (docs/plan.md): analysis → recon → strategy → plan, searched with feedback.

    from guardsearch.apps.plan import plan_problem_sync
    plan_problem_sync("bug-login-empty-password", pipeline="search", model="embedded")

A plan is a contingent JSON DAG (`Plan`); guards at three levels judge it against
the problem's facts and actions, and their feedback steers the DFS (docs/plan.md).
Importing the package registers the app `plan` (guardsearch.registry).
"""

from guardsearch.apps.plan.app import APP
from guardsearch.apps.plan.guards import (
    ExpansivePlanGuard,
    MediumPlanGuard,
    MinimalPlanGuard,
    plan_guard,
)
from guardsearch.apps.plan.plan_format import Plan, complete_plan, generation_schema, plan_schema
from guardsearch.apps.plan.problems import (
    CATEGORIES,
    PlanProblem,
    get_problem,
    load_problem_file,
    problems,
)
from guardsearch.apps.plan.reference import reference_plan
from guardsearch.apps.plan.solve import plan_problem, plan_problem_sync, plan_search
from guardsearch.apps.plan.space import STEP_NAMES, PlanSpace, plan_step

__all__ = [
    "APP",
    "CATEGORIES",
    "STEP_NAMES",
    "ExpansivePlanGuard",
    "MediumPlanGuard",
    "MinimalPlanGuard",
    "Plan",
    "PlanProblem",
    "PlanSpace",
    "complete_plan",
    "generation_schema",
    "get_problem",
    "load_problem_file",
    "plan_guard",
    "plan_problem",
    "plan_problem_sync",
    "plan_schema",
    "plan_search",
    "plan_step",
    "problems",
    "reference_plan",
]
