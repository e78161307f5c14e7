"""Feedback that names the fix (issue 16, item 4): each plan-guard finding with the change
that removes it, and what that change asks of the earlier steps.

A `Finding` is one problem the Medium or Expansive guard found (in the words the search's
rule table reads: "not satisfiable", "unreachable", "exceeds R_max", "dead-end ... no
path") plus the fix, in terms of the plan's own step ids ("put s1 after s4 (s3 gives
code_fixed, s4 gives test_added)"). That text goes to the plan step's retry channel.

It also records what the fix needs from upstream: actions the plan must include
(`include`) and pairs of actions that must come in this order (`before`). On a
backtrack, `upstream_advice` turns those into a line for the step being regenerated —
"list rollback_release" for recon, "put add_null_check before deploy_fix" for the
strategy — in the downstream-failure channel, which never sees plan step ids.

Suggested actions are one look-up deep: an action of the problem that gives the
missing fact, preferring one whose needs already hold there, then one whose needs
some action could give (relaxed reachability); never a plan search.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from guardsearch.apps.plan.plan_format import Plan, PlanStep
from guardsearch.apps.plan.problems import Action, PlanProblem
from guardsearch.apps.plan.repair import (
    Patch,
    budget_patch,
    drop_patch,
    recovery_patch,
    swap_patch,
)
from guardsearch.apps.plan.traces import DeadEnd, Unmet, gives


@dataclass(frozen=True)
class Finding:
    """One problem of a plan, the change that removes it, and what that change needs
    from earlier steps: actions to `include`, and (a, b) pairs meaning a before b.
    `patch`: the fix as a JSON Patch, when it is one mechanical change to the plan's own
    structure (repair.py: a recovery step, lower budgets, drop a step that can never run)."""

    problem: str
    fix: str = ""
    include: tuple[str, ...] = ()
    before: tuple[tuple[str, str], ...] = ()
    patch: Patch | None = None

    @property
    def feedback(self) -> str:
        return f"{self.problem}. Fix: {self.fix}" if self.fix else self.problem


def _set(values: Iterable[str]) -> str:
    return "{" + ", ".join(sorted(values)) + "}"


def _and(values: Sequence[str]) -> str:
    items = list(values)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def closure(problem: PlanProblem, names: Iterable[str]) -> set[str]:
    """Every fact the actions `names` could give from the initial facts (any order,
    every action succeeding: relaxed reachability)."""
    found = (problem.action(n) for n in dict.fromkeys(names))
    usable = [a for a in found if a is not None]
    facts = set(problem.initial)
    grew = True
    while grew:
        grew = False
        for action in usable:
            if set(action.pre) <= facts and not set(action.effects) <= facts:
                facts |= set(action.effects)
                grew = True
    return facts


def reachable(problem: PlanProblem) -> set[str]:
    """Every fact some sequence of the problem's actions could give (relaxed: ignoring
    failures), from the initial facts."""
    return closure(problem, problem.action_names)


def givers(problem: PlanProblem, fact: str, holding: set[str]) -> list[Action]:
    """Actions giving `fact`, those whose needs hold in `holding` first, then those some
    action could enable; actions that can never run are left out."""
    possible = reachable(problem)
    found = [a for a in problem.actions if fact in a.effects and set(a.pre) <= possible]
    return sorted(found, key=lambda a: not set(a.pre) <= holding)


def _describe(action: Action) -> str:
    return f"{action.name} (needs {', '.join(action.pre)})" if action.pre else action.name


def _facts_before(problem: PlanProblem, main: list[PlanStep], step_id: str) -> set[str]:
    facts = set(problem.initial)
    for step in main:
        if step.id == step_id:
            break
        facts |= gives(problem, step)
    return facts


def unmet_finding(problem: PlanProblem, plan: Plan, unmet: Unmet) -> Finding:
    """A main-line step runs before what it needs: move it after the steps that give
    it, or add an action that does."""
    text = (
        f"preconditions {_set(unmet.missing)} of step {unmet.step} ({unmet.action}) "
        "not satisfiable from the initial state or earlier effects"
    )
    main = plan.main_line()
    later = [s for s in main[[s.id for s in main].index(unmet.step) + 1 :]]
    producers: dict[str, PlanStep] = {}
    for fact in unmet.missing:
        step = next((s for s in later if fact in gives(problem, s)), None)
        if step is not None:
            producers[fact] = step
    absent = [f for f in unmet.missing if f not in producers]
    if not absent:
        last = max(producers.values(), key=lambda s: [m.id for m in main].index(s.id))
        shown = ", ".join(f"{s.id} gives {f}" for f, s in sorted(producers.items()))
        return Finding(
            text,
            f"put {unmet.step} ({unmet.action}) after {last.id} ({last.action}) ({shown})",
            before=tuple((s.action, unmet.action) for s in producers.values()),
        )
    holding = _facts_before(problem, main, unmet.step)
    adds: list[str] = []
    parts = [
        f"put {unmet.step} ({unmet.action}) after {s.id} ({s.action}), which gives {f}"
        for f, s in sorted(producers.items())
    ]
    never = False
    for fact in absent:
        options = givers(problem, fact, holding)
        if options:
            adds.append(options[0].name)
            parts.append(
                f"add a step {_describe(options[0])} before {unmet.step} ({unmet.action}), "
                f"which gives {fact}"
            )
        else:
            never = True
            parts.append(f"no action of the problem can give {fact}: drop {unmet.step}")
    fix = f"no step of the plan gives {_and(absent)}; " + "; ".join(parts)
    return Finding(
        text,
        fix,
        include=tuple(adds),
        before=tuple((a, unmet.action) for a in adds)
        + tuple((s.action, unmet.action) for s in producers.values()),
        # A fact no action can give (relaxed reachability): the step can never run in any
        # plan, so every plan that passes leaves it out.
        patch=drop_patch(plan, unmet.step) if never else None,
    )


def goal_finding(problem: PlanProblem, plan: Plan, missing: Sequence[str]) -> Finding:
    text = f"goal tokens {_set(missing)} unreachable: no main-line step gives them"
    main = plan.main_line()
    holding = set(problem.initial)
    for step in main:
        holding |= gives(problem, step)
    adds: list[str] = []
    parts: list[str] = []
    for fact in missing:
        options = givers(problem, fact, holding)
        if options:
            adds.append(options[0].name)
            parts.append(f"end with a step {_describe(options[0])}, which gives {fact}")
    fix = "; ".join(parts)
    return Finding(text, fix, include=tuple(dict.fromkeys(adds)))


def budget_finding(problem: PlanProblem, plan: Plan) -> Finding:
    """Total retry budget over R_max: lower the largest budgets to 1 until it fits."""
    total = plan.total_retry_budget
    text = f"total_retry_budget {total} exceeds R_max {problem.r_max}"
    if len(plan.steps) > problem.r_max:
        return Finding(
            text,
            f"each of the {len(plan.steps)} steps needs retry_budget >= 1: "
            f"use at most {problem.r_max} steps",
        )
    excess = total - problem.r_max
    lowered: list[str] = []
    budgets: dict[str, int] = {}
    for step in sorted(plan.steps, key=lambda s: -s.retry_budget):
        cut = min(excess, step.retry_budget - 1)
        if cut <= 0:
            break
        excess -= cut
        lowered.append(f"{step.id} ({step.action}) to {step.retry_budget - cut}")
        budgets[step.id] = step.retry_budget - cut
    return Finding(
        text,
        f"lower retry_budget of {', '.join(lowered)} (total {problem.r_max})",
        patch=budget_patch(plan, budgets) if budgets else None,
    )


def dead_end_finding(problem: PlanProblem, plan: Plan, dead: DeadEnd) -> Finding:
    """A risky step's failure ends badly: give it a recovery step whose action gives the
    lost safe facts back and can run there, or give the recovery step what it needs."""
    text = (
        f"dead-end: if {dead.after} ({dead.action}) fails, no path reaches the goal or the "
        f"safe facts ({dead.reason})"
    )
    holding = _facts_before(problem, plan.main_line(), dead.after)
    failed = problem.action(dead.action)
    if failed is not None:
        holding -= set(failed.loses)
    lost = list(dead.lost) or sorted(set(problem.safe) - holding)
    rescues = [a for a in problem.actions if lost and set(lost) <= set(a.effects)]
    runnable = [a for a in rescues if set(a.pre) <= holding]
    current = plan.by_id(dead.recovery) if dead.recovery else None
    if current is not None and dead.missing and not any(a.name != current.action for a in runnable):
        adds = [o[0].name for o in (givers(problem, f, holding) for f in dead.missing) if o]
        fix = (
            f"give {_set(dead.missing)} before {dead.after}: add "
            f"{_and(adds) if adds else 'a step that gives them'} to the main line before "
            f"{dead.after} ({dead.action})"
        )
        return Finding(text, fix, include=tuple(adds), before=tuple((a, dead.action) for a in adds))
    choice = next(iter(runnable or rescues), None)
    if choice is None:
        return Finding(
            text,
            f"give {dead.after} ({dead.action}) an on_failure step that gives back {_set(lost)}",
        )
    if current is not None:
        fix = (
            f"make the recovery step {current.id} ({current.action}) do {_describe(choice)} instead"
        )
        return Finding(
            text, fix, include=(choice.name,), patch=swap_patch(plan, current.id, choice)
        )
    # A later step already doing it only lacks the on_failure link: say just that.
    taken = plan.recovery_ids()
    ids = [s.id for s in plan.steps]
    later = (
        next(
            (
                s
                for s in plan.steps[ids.index(dead.after) + 1 :]
                if s.action == choice.name and s.id not in taken
            ),
            None,
        )
        if dead.after in ids
        else None
    )
    if later is not None:
        fix = (
            f"set the on_failure of {dead.after} ({dead.action}) to {later.id} "
            f"({later.action}), so that {later.id} runs only when {dead.after} fails"
        )
    else:
        fix = (
            f"add a recovery step {_describe(choice)} after the main steps and set the "
            f"on_failure of {dead.after} ({dead.action}) to its id"
        )
    return Finding(
        text, fix, include=(choice.name,), patch=recovery_patch(plan, dead.after, choice)
    )


def order_finding(step: PlanStep, target: PlanStep) -> Finding:
    """on_failure naming an earlier step: recovery steps go after the main steps."""
    return Finding(
        f"step {step.id}: on_failure must name a later step, not {target.id}",
        f"put {target.id} ({target.action}) after {step.id} ({step.action}) (recovery steps "
        "go after the main steps)",
    )


def upstream_advice(
    findings: Sequence[Finding], step: str, listed: Sequence[str] | None = None
) -> str:
    """What the regenerated `step` (recon or strategy) should change so the plan's fix
    becomes possible; empty when the findings ask nothing of it."""
    include = list(dict.fromkeys(a for f in findings for a in f.include))
    if step == "recon":
        missing = [a for a in include if listed is None or a not in listed]
        return f"List {_and(missing)}: the plan needs it." if missing else ""
    if step == "strategy":
        pairs = list(dict.fromkeys(p for f in findings for p in f.before))
        parts = [f"put {a} before {b}" for a, b in pairs]
        extra = [a for a in include if not any(a == p[0] for p in pairs)]
        if extra:
            parts.append(f"include {_and(extra)}")
        return ("In the order, " + "; ".join(parts) + ".") if parts else ""
    return ""
