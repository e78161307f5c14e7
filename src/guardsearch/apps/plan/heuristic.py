"""Where a plan failure's fix lies: the search's rule table, read with the fix in hand.

The plan guards' feedback names the fix ("add a recovery step rollback_release ...",
"lower retry_budget of s2 to 1"). `FixHeuristic` reads it with the outputs of the
steps above (the failure's context carries them) and sends the search to the step
that can make that fix, instead of where the feedback's kind alone points:

- the fix names an action recon did not list: the plan cannot use it (its schema only
  allows recon's actions), nor can the strategy: back to **recon**;
- the fix is the plan's own (retry budgets over R_max, a failure branch naming an
  earlier step, misstated needs, a missing recovery step whose action recon listed):
  **retry the plan** with the fix in its retry channel;
- a step is missing or out of place (not satisfiable, unreachable): the plan follows
  the strategy's order, so back to the **strategy**, which the backtrack summary tells
  what to put where — unless the strategy's order already runs and reaches the goal:
  then the plan left it, and the fix is the plan's own (**retry the plan**; on the
  committed run the search sent mig-email-verified-column to four strategies whose
  orders all held backfill_column, and each plan left it out, where a single pass
  retried with the fix solved it);
- the same feedback again one level further, never above the step that can make
  the fix (the analysis never can: it names a class and key facts).

Any other failure (an upstream step's own guard, formatting) goes by the search's rule
table (`RuleHeuristic`) unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from guardsearch.apps.plan.follow import strategy_order
from guardsearch.apps.plan.problems import PlanProblem
from guardsearch.apps.plan.step_guards import earlier, recon_actions
from guardsearch.search.heuristic import DEDUP_GUARD, Failure, RuleHeuristic, repeats

# Feedback kinds whose fix needs a step added or moved (the strategy's order), and the
# dead end, whose fix is a recovery step (the plan's own when recon listed its action).
_ORDERING = ("not satisfiable", "unreachable")
_DEAD_END = "dead-end"


def _listed(failure: Failure) -> list[str] | None:
    """The actions recon listed on the failed path (None: no recon on it)."""
    return recon_actions(earlier(failure.context, "recon")) if failure.context else None


@dataclass(frozen=True)
class FixHeuristic:
    """The search's rule table, but a plan failure goes where its fix can be made (see the
    module docstring). `problem` names the actions a fix may mention."""

    problem: PlanProblem
    rules: RuleHeuristic = field(default_factory=RuleHeuristic)

    def decide_rule(self, failure: Failure) -> tuple[int, str]:
        """The depth and the reason (recorded as the backtrack's rule)."""
        steps = list(failure.steps)
        listed = _listed(failure)
        if (
            failure.step != "plan"
            or failure.verdict.guard == DEDUP_GUARD
            or listed is None
            or not {"recon", "strategy"} <= set(steps)
            or any(r.matches(failure.feedback) for r in self.rules.format_rules)
        ):
            return self.rules.decide_rule(failure)
        feedback = failure.feedback
        to_recon = failure.level - steps.index("recon")
        to_strategy = failure.level - steps.index("strategy")
        named = set(re.findall(r"[a-z][a-z0-9_]*", feedback)) & set(self.problem.action_names)
        unlisted = sorted(named - set(listed))
        if unlisted:
            return to_recon, f"fix needs {', '.join(unlisted)}, which recon did not list -> recon"
        again = repeats(failure.history, feedback) >= self.rules.escalate_after
        lowered = feedback.lower()
        if any(kind in lowered for kind in _ORDERING) and self._strategy_runs(failure):
            depth, why = 0, "the strategy's order runs; the plan left it -> retry the plan"
        elif any(kind in lowered for kind in _ORDERING):
            depth, why = to_strategy, "a step missing or out of place -> strategy"
        elif _DEAD_END in lowered:
            depth, why = 0, "recovery step to add, its action listed -> retry the plan"
        else:
            depth, why = 0, "the plan's own fix -> retry the plan"
        if again and depth < to_strategy:
            return to_strategy, f"same feedback {self.rules.escalate_after}x -> strategy"
        return depth, why

    def _strategy_runs(self, failure: Failure) -> bool:
        """Does the strategy's order on the failed path run from the initial facts and
        reach the goal (so a plan failing on order or a missing step did not follow it)?"""
        return strategy_order(self.problem, failure.context) is not None

    def __call__(self, failure: Failure) -> int:
        return self.decide_rule(failure)[0]
