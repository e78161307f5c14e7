"""The plan search never makes more than B_max proposer calls.

B_max = Σ_i rmax_i × (1 + backtrack_budget_i); hypothesis draws the step budgets and,
call by call, whether each step's output passes or fails with one of the plan
guards' real feedback kinds.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_helpers import RISKY, good_outputs, step_of, unsatisfiable, without_recovery

from guardsearch import ModelRequest, ScriptedModel, StepBudget
from guardsearch.apps.plan import STEP_NAMES, PlanSpace, get_problem, plan_search
from guardsearch.search.state import TERMINATIONS
from guardsearch.search.strategies.dfs import b_max

PROBLEM = get_problem(RISKY)
GOOD = good_outputs(PROBLEM)
BAD = {
    "analysis": [json.dumps({"problem_class": "feature", "key_facts": ["service_up"]})],
    "recon": [json.dumps({"actions": ["reproduce_crash"]}), "no idea"],
    "strategy": [json.dumps({"approach": "x1", "rationale": "no", "order": ["deploy_fix"]})],
    "plan": ["not json", unsatisfiable(PROBLEM), without_recovery(PROBLEM)],
}

budgets_st = st.fixed_dictionaries(
    {
        name: st.builds(StepBudget, rmax=st.integers(1, 3), backtrack_budget=st.integers(0, 3))
        for name in STEP_NAMES
    }
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(budgets=budgets_st, outcomes=st.lists(st.integers(0, 5), min_size=1, max_size=80))
async def test_plan_search_calls_never_exceed_b_max(
    budgets: dict[str, StepBudget], outcomes: list[int]
) -> None:
    counter = iter(range(10_000))

    def answer(request: ModelRequest) -> str:
        step = step_of(request)
        n = next(counter)
        pick = outcomes[n % len(outcomes)]
        bad = BAD[step]
        # A repeated answer is a duplicate: it still costs its call, so it counts too.
        return GOOD[step] if pick >= len(bad) else bad[pick]

    space = PlanSpace.build(PROBLEM, budgets=budgets)
    bound = b_max(space, budgets, levels=len(STEP_NAMES))
    model = ScriptedModel(answer)
    result = await plan_search(PROBLEM, model=model, budgets=budgets)
    assert result.calls <= bound
    assert result.termination in TERMINATIONS
    if result.succeeded:
        assert result.answer is not None
