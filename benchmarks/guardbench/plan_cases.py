"""Labelled cases for the plan app's guards, from the 32 shipped plan problems.

Plans: each problem's reference plan (reference.py) and mutations of it. The label
of a plan for each guard level comes from `Truth`, a small executor written here
independently of the guards, on the plan semantics of plan_format.py:

- `plan-minimal`: the structure is sound (unique ids, known actions, retry budgets
  >= 1, `on_failure` naming a later step);
- `plan-medium`: and the all-success execution meets every precondition and reaches
  the goal, the declared pre/effects are the action's, the budgets fit R_max;
- `plan-expansive`: and every risky step's failure for good ends, through its
  recovery step if any, with the goal or the safe facts holding.

Upstream steps (the label is what the next step needs, not the guard's own rule):
- `plan-recon`: the actions recon lists suffice to reach the goal from the initial
  facts (a strategy can only order what recon found);
- `plan-strategy`: the order names an approach with a rationale, uses only recon's
  actions, and run in sequence meets every precondition and reaches the goal;
- `plan-analysis`: the key facts are facts of this problem.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from guardbench.cases import Case, balanced
from guardsearch.apps.plan.guards import plan_guard
from guardsearch.apps.plan.problems import PlanProblem, get_problem, problems
from guardsearch.apps.plan.reference import reference_plan
from guardsearch.apps.plan.step_guards import AnalysisGuard, ReconGuard, StrategyGuard
from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context

SEED = 3232
LEVELS = ("minimal", "medium", "expansive")
Steps = list[dict[str, Any]]


@dataclass(frozen=True)
class Truth:
    """What a plan (a list of step dicts) is, by the documented semantics."""

    problem: PlanProblem

    def structure(self, steps: Steps) -> bool:
        ids = [s.get("id") for s in steps]
        if len(set(ids)) != len(ids) or not 1 <= len(steps) <= 8:
            return False
        for i, step in enumerate(steps):
            if self.problem.action(step.get("action", "")) is None:
                return False
            if not isinstance(step.get("retry_budget"), int) or step["retry_budget"] < 1:
                return False
            target = step.get("on_failure")
            if target is not None and target not in ids[i + 1 :]:
                return False
        return True

    def _recovery(self, steps: Steps) -> set[str]:
        return {s["on_failure"] for s in steps if s.get("on_failure")}

    def main_line(self, steps: Steps) -> bool:
        if not self.structure(steps):
            return False
        for step in steps:
            action = self.problem.action(step["action"])
            assert action is not None
            for key, truth in (("pre", action.pre), ("effects", action.effects)):
                if key in step and set(step[key]) != set(truth):
                    return False
        if sum(s["retry_budget"] for s in steps) > self.problem.r_max:
            return False
        facts = set(self.problem.initial)
        for step in (s for s in steps if s["id"] not in self._recovery(steps)):
            action = self.problem.action(step["action"])
            assert action is not None
            if not set(action.pre) <= facts:
                return False
            facts |= set(action.effects)
        return set(self.problem.goal) <= facts

    def settled(self, facts: set[str]) -> bool:
        p = self.problem
        return set(p.goal) <= facts or (bool(p.safe) and set(p.safe) <= facts)

    def every_trace(self, steps: Steps) -> bool:
        if not self.main_line(steps):
            return False
        by_id = {s["id"]: s for s in steps}
        facts = set(self.problem.initial)
        for step in (s for s in steps if s["id"] not in self._recovery(steps)):
            if not self._failure_ends_well(step, set(facts), by_id, depth=0):
                return False
            action = self.problem.action(step["action"])
            assert action is not None
            facts |= set(action.effects)
        return True

    def _failure_ends_well(
        self, step: dict[str, Any], facts: set[str], by_id: dict[str, Any], depth: int
    ) -> bool:
        action = self.problem.action(step["action"])
        assert action is not None
        if not action.may_fail:
            return True
        after = facts - set(action.loses)
        target = by_id.get(step.get("on_failure") or "")
        if target is None or depth > 8:
            return self.settled(after)
        fix = self.problem.action(target["action"])
        assert fix is not None
        if not set(fix.pre) <= after:
            return False
        if not self._failure_ends_well(target, set(after), by_id, depth + 1):
            return False
        return self.settled(after | set(fix.effects))

    def level(self, steps: Steps, level: str) -> bool:
        return {"minimal": self.structure, "medium": self.main_line, "expansive": self.every_trace}[
            level
        ](steps)

    def reaches_goal(self, order: list[str]) -> bool:
        """`order` run in sequence from the initial facts meets every precondition and
        ends with the goal."""
        facts = set(self.problem.initial)
        for name in order:
            action = self.problem.action(name)
            if action is None or not set(action.pre) <= facts:
                return False
            facts |= set(action.effects)
        return set(self.problem.goal) <= facts

    def sufficient(self, listed: list[str]) -> bool:
        """Can the actions `listed` reach the goal from the initial facts (any order)?"""
        facts = set(self.problem.initial)
        usable = [a for a in self.problem.actions if a.name in listed]
        grew = True
        while grew:
            grew = False
            for action in usable:
                if set(action.pre) <= facts and not set(action.effects) <= facts:
                    facts |= set(action.effects)
                    grew = True
        return set(self.problem.goal) <= facts


# -- plans: the reference and its mutations ----------------------------------------------


def reference_steps(problem: PlanProblem) -> Steps:
    plan = reference_plan(problem)
    out = []
    for step in plan.steps:
        row: dict[str, Any] = {"id": step.id, "action": step.action, "retry_budget": 1}
        if step.on_failure:
            row["on_failure"] = step.on_failure
        out.append(row)
    return out


def _main_indices(steps: Steps) -> list[int]:
    recovery = {s["on_failure"] for s in steps if s.get("on_failure")}
    return [i for i, s in enumerate(steps) if s["id"] not in recovery]


def _renumber(steps: Steps) -> Steps:
    """Ids s1.. in list order, `on_failure` following its step."""
    names = {s["id"]: f"s{i + 1}" for i, s in enumerate(steps)}
    out = []
    for s in steps:
        row = {**s, "id": names[s["id"]]}
        if s.get("on_failure"):
            row["on_failure"] = names.get(s["on_failure"], s["on_failure"])
        out.append(row)
    return out


Mutation = Callable[[PlanProblem, Steps, random.Random], Steps | None]


def _reference(problem: PlanProblem, steps: Steps, rng: random.Random) -> Steps | None:
    return steps


def _extra_retry(problem: PlanProblem, steps: Steps, rng: random.Random) -> Steps | None:
    out = copy.deepcopy(steps)
    rng.choice(out)["retry_budget"] = 2
    return out


def _over_budget(problem: PlanProblem, steps: Steps, rng: random.Random) -> Steps | None:
    out = copy.deepcopy(steps)
    out[0]["retry_budget"] = min(9, problem.r_max + 1)
    return out


def _harmless_extra(problem: PlanProblem, steps: Steps, rng: random.Random) -> Steps | None:
    """A safe action whose preconditions hold initially, run first."""
    used = {s["action"] for s in steps}
    spare = [
        a
        for a in problem.actions
        if a.name not in used and not a.may_fail and set(a.pre) <= set(problem.initial)
    ]
    if not spare:
        return None
    extra = {"id": "s0", "action": rng.choice(spare).name, "retry_budget": 1}
    return _renumber([extra, *copy.deepcopy(steps)])


def _swap_adjacent(problem: PlanProblem, steps: Steps, rng: random.Random) -> Steps | None:
    main = _main_indices(steps)
    if len(main) < 2:
        return None
    k = rng.randrange(len(main) - 1)
    out = copy.deepcopy(steps)
    i, j = main[k], main[k + 1]
    out[i], out[j] = out[j], out[i]
    return _renumber(out)


def _reverse_main(problem: PlanProblem, steps: Steps, rng: random.Random) -> Steps | None:
    main = _main_indices(steps)
    if len(main) < 2:
        return None
    out = copy.deepcopy(steps)
    rows = [out[i] for i in main][::-1]
    for i, row in zip(main, rows, strict=True):
        out[i] = row
    return _renumber(out)


def _drop_step(problem: PlanProblem, steps: Steps, rng: random.Random) -> Steps | None:
    main = [i for i in _main_indices(steps) if not steps[i].get("on_failure")]
    if len(main) < 2:
        return None
    out = copy.deepcopy(steps)
    del out[rng.choice(main)]
    return _renumber(out)


def _unknown_action(problem: PlanProblem, steps: Steps, rng: random.Random) -> Steps | None:
    out = copy.deepcopy(steps)
    rng.choice(out)["action"] = "ask_a_colleague"
    return out


def _duplicate_id(problem: PlanProblem, steps: Steps, rng: random.Random) -> Steps | None:
    if len(steps) < 2:
        return None
    out = copy.deepcopy(steps)
    if any(s.get("on_failure") == out[1]["id"] for s in out):
        return None
    out[1]["id"] = out[0]["id"]
    return out


def _zero_retry(problem: PlanProblem, steps: Steps, rng: random.Random) -> Steps | None:
    out = copy.deepcopy(steps)
    rng.choice(out)["retry_budget"] = 0
    return out


def _backward_on_failure(problem: PlanProblem, steps: Steps, rng: random.Random) -> Steps | None:
    if len(steps) < 2:
        return None
    out = copy.deepcopy(steps)
    out[-1]["on_failure"] = out[0]["id"]
    return out


def _no_recovery(problem: PlanProblem, steps: Steps, rng: random.Random) -> Steps | None:
    recovery = {s["on_failure"] for s in steps if s.get("on_failure")}
    if not recovery:
        return None
    out = [
        {k: v for k, v in s.items() if k != "on_failure"}
        for s in copy.deepcopy(steps)
        if s["id"] not in recovery
    ]
    return _renumber(out)


def _wrong_declared_pre(problem: PlanProblem, steps: Steps, rng: random.Random) -> Steps | None:
    out = copy.deepcopy(steps)
    step = rng.choice(out)
    action = problem.action(step["action"])
    assert action is not None
    step["pre"] = list(action.pre)[1:] if action.pre else list(problem.initial)[:1]
    step["effects"] = list(action.effects)
    return out if step["pre"] != list(action.pre) else None


def _declared_honestly(problem: PlanProblem, steps: Steps, rng: random.Random) -> Steps | None:
    out = copy.deepcopy(steps)
    for step in out:
        action = problem.action(step["action"])
        assert action is not None
        step["pre"], step["effects"] = list(action.pre), list(action.effects)
    return out


def _unreachable_substitute(problem: PlanProblem, steps: Steps, rng: random.Random) -> Steps | None:
    """A main-line action swapped for another giving the same effects whose
    preconditions nothing provides (the problems' distractors)."""
    out = copy.deepcopy(steps)
    for i in _main_indices(out):
        action = problem.action(out[i]["action"])
        assert action is not None
        for other in problem.actions:
            if other.name != action.name and set(action.effects) <= set(other.effects):
                out[i]["action"] = other.name
                return out
    return None


MUTATIONS: dict[str, Mutation] = {
    "reference": _reference,
    "extra-retry": _extra_retry,
    "harmless-extra-step": _harmless_extra,
    "declared-honestly": _declared_honestly,
    "swap-adjacent": _swap_adjacent,
    "reverse-main-line": _reverse_main,
    "drop-step": _drop_step,
    "unreachable-substitute": _unreachable_substitute,
    "no-recovery": _no_recovery,
    "over-budget": _over_budget,
    "wrong-declared-pre": _wrong_declared_pre,
    "unknown-action": _unknown_action,
    "duplicate-id": _duplicate_id,
    "zero-retry": _zero_retry,
    "backward-on-failure": _backward_on_failure,
}


def plans() -> list[tuple[PlanProblem, str, Steps]]:
    rng = random.Random(SEED)
    out = []
    for problem in problems():
        base = reference_steps(problem)
        for name, mutate in MUTATIONS.items():
            steps = mutate(problem, copy.deepcopy(base), rng)
            if steps is not None:
                out.append((problem, name, steps))
    return out


def plan_guard_cases(level: str) -> list[Case]:
    rng = random.Random(f"{SEED}-{level}")
    passing: list[Case] = []
    failing: list[Case] = []
    for problem, shape, steps in plans():
        label = "pass" if Truth(problem).level(steps, level) else "fail"
        case = Case(
            guard=f"plan-{level}",
            id=f"{problem.id}-{shape}",
            label=label,  # type: ignore[arg-type]
            shape=shape,
            input={"problem": problem.id, "plan": {"steps": steps}},
        )
        (passing if label == "pass" else failing).append(case)
    return balanced(passing, failing, 40, rng)


# -- upstream steps ----------------------------------------------------------------------


def recon_cases() -> list[Case]:
    rng = random.Random(SEED + 1)
    passing: list[Case] = []
    failing: list[Case] = []
    for problem in problems():
        truth = Truth(problem)
        main = [s["action"] for s in reference_steps(problem)]
        goal_only = [a.name for a in problem.actions if set(a.effects) & set(problem.goal)]
        spare = [a.name for a in problem.actions if a.name not in main]
        variants = {
            "reference-actions": main,
            "reference-plus-spare": main + spare[:1],
            "goal-producers-only": goal_only,
            "one-missing": [a for a in main if a != rng.choice(main[:-1] or main)],
            "spares-only": spare or ["ask_a_colleague"],
        }
        for shape, listed in variants.items():
            listed = list(dict.fromkeys(listed))[:8]
            if not listed:
                continue
            label = "pass" if truth.sufficient(listed) else "fail"
            case = Case(
                guard="plan-recon",
                id=f"{problem.id}-{shape}",
                label=label,  # type: ignore[arg-type]
                shape=shape,
                input={"problem": problem.id, "value": {"actions": listed}},
            )
            (passing if label == "pass" else failing).append(case)
    return balanced(passing, failing, 40, rng)


def strategy_cases() -> list[Case]:
    rng = random.Random(SEED + 2)
    passing: list[Case] = []
    failing: list[Case] = []
    for problem in problems():
        truth = Truth(problem)
        steps = reference_steps(problem)
        main = [s["action"] for s in steps if s["id"] not in _recovery_ids(steps)]
        listed = [s["action"] for s in steps]
        spare = [a.name for a in problem.actions if a.name not in listed]
        rationale = "each action needs what the one before it gives"
        variants: dict[str, tuple[str, str, list[str]]] = {
            "reference-order": ("dependency order", rationale, main),
            "reversed-order": ("dependency order", rationale, main[::-1]),
            "no-rationale": ("dependency order", "do it", main),
        }
        if spare:
            variants["unlisted-action"] = ("dependency order", rationale, [*main, spare[0]])
        for shape, (approach, why, order) in variants.items():
            if not order:
                continue
            ok = truth.reaches_goal(order) and all(a in listed for a in order)
            ok = ok and len(why.split()) >= 3
            label = "pass" if ok else "fail"
            case = Case(
                guard="plan-strategy",
                id=f"{problem.id}-{shape}",
                label=label,  # type: ignore[arg-type]
                shape=shape,
                input={
                    "problem": problem.id,
                    "recon": {"actions": listed},
                    "value": {"approach": approach, "rationale": why, "order": order},
                },
            )
            (passing if label == "pass" else failing).append(case)
    return balanced(passing, failing, 32, rng)


def _recovery_ids(steps: Steps) -> set[str]:
    return {s["on_failure"] for s in steps if s.get("on_failure")}


def analysis_cases() -> list[Case]:
    rng = random.Random(SEED + 3)
    everything = problems()
    passing: list[Case] = []
    failing: list[Case] = []
    for i, problem in enumerate(everything):
        other = everything[(i + 1) % len(everything)]
        own = list(problem.facts)
        foreign = [f for f in other.facts if f not in own]
        rng.shuffle(own)
        variants = {
            "own-facts": own[:3],
            "goal-and-initial": [*problem.goal, *problem.initial][:4],
            "foreign-fact": [*own[:2], *foreign[:1]],
            "no-facts": [],
        }
        for shape, facts in variants.items():
            ok = bool(facts) and all(f in problem.facts for f in facts)
            case = Case(
                guard="plan-analysis",
                id=f"{problem.id}-{shape}",
                label="pass" if ok else "fail",
                shape=shape,
                input={
                    "problem": problem.id,
                    "value": {"problem_class": problem.category, "key_facts": facts},
                },
            )
            (passing if ok else failing).append(case)
    return balanced(passing, failing, 32, rng)


# -- judging -----------------------------------------------------------------------------


def _artifact(step: str, value: Any) -> Artifact:
    return Artifact(id="case", step=step, text=json.dumps(value), value=value)


async def judge_plan(case: Case) -> bool:
    level = case.guard.removeprefix("plan-")
    problem = get_problem(case.input["problem"])
    guard = plan_guard(problem, level)
    value = case.input["plan"]
    verdict = await guard.check(_artifact("plan", value), Context(objective=problem.describe()))
    return verdict.passed


async def judge_step(case: Case) -> bool:
    problem = get_problem(case.input["problem"])
    guards = {"plan-recon": ReconGuard, "plan-strategy": StrategyGuard,
              "plan-analysis": AnalysisGuard}  # fmt: skip
    guard = guards[case.guard](problem)
    context = Context(objective=problem.describe())
    if "recon" in case.input:
        context = Context(
            objective=problem.describe(), artifacts=(("recon", json.dumps(case.input["recon"])),)
        )
    verdict = await guard.check(_artifact(case.guard, case.input["value"]), context)
    return verdict.passed
