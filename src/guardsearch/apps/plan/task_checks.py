"""The checks of a free task's plan, as plain functions over a `Plan` and a `TaskSpec`
(task_guards.py turns them into a guard; the free recon guard uses the action checks).

Each returns what is wrong in words a model can act on (None or empty: nothing).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from guardsearch.apps.plan.plan_format import Plan, PlanStep
from guardsearch.apps.plan.task_spec import Constraint, Dependency, TaskSpec
from guardsearch.apps.plan.task_text import number_text, with_compounds, words

# Verbs that name no particular action: a step "handle_catering" says nothing done.
VAGUE_VERBS = frozenset(
    words(
        "handle manage deal work process complete finish execute perform start begin "
        "continue proceed address ensure"
    )
)


RESTATE_SHARE = 0.6


def step_words(step: PlanStep) -> tuple[str, ...]:
    """What a step says, normalised: its action and its detail."""
    return words(f"{step.action} {step.detail or ''}")


def action_problem(action: str) -> str | None:
    """Why the action name `action` is not an action on an object (None: it is)."""
    act = words(action)
    first = re.split(r"[\s_\-]+", action.strip())[0]
    if not re.fullmatch(r"[A-Za-z]{2,}", first):
        return "does not start with a verb (write verb_object, like book_venue)"
    if len(act) < 2:
        return "names no action on an object (write verb_object, like book_venue)"
    if act[0] in VAGUE_VERBS:
        return "is vague: name what is done, not that it is handled"
    return None


def restates(step: PlanStep, task_words: tuple[str, ...]) -> bool:
    """Is the step the whole task again (most of the task's words, like
    "organize: organize a one-day offsite for 12 people in Lisbon ...")?"""
    have = set(step_words(step))
    wanted = set(task_words)
    return len(wanted) >= 4 and len(wanted & have) >= RESTATE_SHARE * len(wanted)


# Units of measure: a detail of a number and these only is a value, not what is done.
_MEASURES = frozenset(
    words(
        "second seconds sec secs s minute minutes min mins hour hours h hr day days week "
        "weeks month months year years ms millisecond milliseconds gb tb mb kb km m metre "
        "metres meter meters kg g percent % eur usd gbp euro euros dollar dollars pound pounds"
    )
)


@dataclass(frozen=True)
class TaskView:
    """What the concreteness check reads from a spec: the task's words, the names it uses
    (no name is a verb: "api_latency" does nothing) and the units its constraints count
    in (a detail "12 people" is a value, not what is done)."""

    task_words: tuple[str, ...] = ()
    names: frozenset[str] = frozenset()
    units: frozenset[str] = frozenset()

    @classmethod
    def of(cls, spec: TaskSpec) -> TaskView:
        names = {
            w
            for c in spec.constraints
            if c.kind in ("requirement", "place") and c.text[:1].isupper()
            for w in words(c.text)
        }
        units = {w for c in spec.constraints if c.unit for w in words(c.unit)}
        return cls(words(spec.task), frozenset(names), frozenset(units) | _MEASURES)


def value_only(detail: str, units: frozenset[str]) -> bool:
    """Is the detail a number and its unit, nothing done ("3 seconds", "500 ms")?"""
    said = words(detail)
    return any(w[0].isdigit() for w in said) and all(w[0].isdigit() or w in units for w in said)


def concreteness(step: PlanStep, view: TaskView) -> str | None:
    """Why `step` is not a concrete action on an object (None: it is)."""
    label = f"step {step.id} ({step.action})"
    wrong = action_problem(step.action)
    if wrong:
        return f"{label} {wrong}"
    first = words(re.split(r"[\s_\-]+", step.action.strip())[0])
    if first and first[0] in view.names:
        return f"{label} starts with a name, not a verb (write verb_object, like book_venue)"
    if restates(step, view.task_words):
        return f"{label} restates the whole task: name one concrete part of it"
    if len(words(step.detail or "")) < 2:
        return f"{label} has no detail: say what exactly (which thing, where, how many)"
    if value_only(step.detail or "", view.units):
        return f"{label} has only a value as its detail: say what is done with it"
    return None


def same_action(a: str) -> tuple[str, ...]:
    """The normalised action: `book_venue`, `book_the_venue` and `venue_book` are one."""
    return tuple(sorted(set(words(a))))


def repeated(plan: Plan) -> list[str]:
    """Steps doing an action an earlier step already does (normalised)."""
    seen: dict[tuple[str, ...], PlanStep] = {}
    out = []
    for step in plan.steps:
        key = same_action(step.action)
        first = seen.setdefault(key, step)
        if first is not step:
            out.append(f"step {step.id} ({step.action}) repeats step {first.id} ({first.action})")
    return out


def drop_copied_steps(value: Any) -> tuple[Any, list[str]]:
    """`value` (a plan as the model wrote it) without the steps that copy an earlier step
    word for word (the same normalised action and detail), and a note for each dropped.

    A copied step adds nothing a guard could credit, and the small models write them in
    runs (`deploy`, `update`, `deploy`, `update`); dropping them before judging turns
    such a plan into the plan it is, whose other faults the feedback can then name. A
    step some `on_failure` names is kept (the plan refers to it). Anything that is not a
    plan-shaped object is returned unchanged, for the Minimal guard to explain.
    """
    if not isinstance(value, dict) or not isinstance(value.get("steps"), list):
        return value, []
    named = {s.get("on_failure") for s in value["steps"] if isinstance(s, dict)}
    seen: dict[tuple[tuple[str, ...], tuple[str, ...]], Any] = {}
    kept: list[Any] = []
    notes: list[str] = []
    for step in value["steps"]:
        if not isinstance(step, dict) or not isinstance(step.get("action"), str):
            kept.append(step)
            continue
        key = (same_action(step["action"]), words(str(step.get("detail") or "")))
        first = seen.setdefault(key, step)
        if first is not step and step.get("id") not in named:
            notes.append(
                f"dropped step {step.get('id')} ({step['action']}): it copies step "
                f"{first.get('id')} word for word"
            )
            continue
        kept.append(step)
    return ({**value, "steps": kept} if notes else value), notes


def addressed(constraint: Constraint, steps: Sequence[PlanStep]) -> bool:
    """Does one of `steps` mention one of the constraint's terms?"""
    said = [with_compounds(step_words(s)) for s in steps]
    return any(all(w in have for w in alt) for alt in constraint.alternatives() for have in said)


def budget_problem(constraint: Constraint, steps: Sequence[PlanStep]) -> tuple[bool, str | None]:
    """(addressed, what is wrong): steps' costs, when given, must add up to at most the
    budget; with none given, a step must mention the amount."""
    costs = [s.cost for s in steps if s.cost is not None]
    if not costs:
        return addressed(constraint, steps), None
    total = sum(costs)
    limit = constraint.value
    if limit is not None and total > limit:
        unit = f" {constraint.unit}" if constraint.unit else ""
        return True, (
            f"the steps' costs add up to {number_text(total)}{unit}, over the budget of "
            f"{number_text(limit)}{unit}: lower or drop costs"
        )
    return True, None


def does(step: PlanStep, phrase: str) -> bool:
    """Does `step` do `phrase` (has at least half of its words)?"""
    wanted = words(phrase)
    have = set(step_words(step))
    return bool(wanted) and 2 * sum(1 for w in wanted if w in have) >= len(wanted)


def order_problem(dep: Dependency, plan: Plan) -> str | None:
    line = plan.main_line()
    first = next((i for i, s in enumerate(line) if does(s, dep.before)), None)
    then = next((i for i, s in enumerate(line) if does(s, dep.after)), None)
    stated = f"the task says {dep.before!r} before {dep.after!r}"
    if first is None or then is None:
        missing = dep.before if first is None else dep.after
        return f"{stated}, but no step does {missing!r}"
    if first > then:
        return (
            f"{stated}, but step {line[then].id} ({line[then].action}) comes before "
            f"step {line[first].id} ({line[first].action}): move it after"
        )
    return None


def term_of(constraint: Constraint) -> str:
    """The words a step can say to address `constraint` (its first term; a budget's amount)."""
    alts = constraint.terms or [constraint.text]
    return alts[0] if constraint.kind != "budget" else number_text(constraint.value or 0)


def constraint_status(spec: TaskSpec, plan: Plan) -> list[tuple[Constraint, bool, str | None]]:
    """Each constraint, whether a step addresses it, and what is wrong beyond that (costs
    over a budget). A step that restates the whole task addresses nothing: it copies the
    constraints, it does not act on them."""
    task_words = words(spec.task)
    acting = [s for s in plan.steps if not restates(s, task_words)]
    out: list[tuple[Constraint, bool, str | None]] = []
    for c in spec.constraints:
        if c.kind == "budget":
            out.append((c, *budget_problem(c, acting)))
        else:
            out.append((c, addressed(c, acting), None))
    return out


def faulty_steps(spec: TaskSpec, plan: Plan) -> list[tuple[PlanStep, str]]:
    """The steps the `concrete` or `no_repeats` check names, each with why (in order)."""
    view = TaskView.of(spec)
    seen: set[tuple[str, ...]] = set()
    out = []
    for step in plan.steps:
        why = concreteness(step, view)
        key = same_action(step.action)
        if why is None and key in seen:
            why = f"step {step.id} ({step.action}) repeats an earlier step's action"
        seen.add(key)
        if why:
            out.append((step, why))
    return out


def constraint_problems(spec: TaskSpec, plan: Plan) -> tuple[int, list[str]]:
    """How many constraints are addressed, and the feedback for the rest."""
    missing: list[str] = []
    other: list[str] = []
    met = 0
    for c, ok, wrong in constraint_status(spec, plan):
        other += [wrong] if wrong else []
        met += ok
        if not ok:
            missing.append(f"{c.describe()} (say {term_of(c)!r})")
    out = other
    if missing:
        out = [
            f"constraints addressed by no step: {'; '.join(missing)}. Fix: put each in the "
            "detail of the step that handles it",
            *other,
        ]
    return met - len(other), out
