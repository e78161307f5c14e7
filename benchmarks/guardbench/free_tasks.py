"""The free tasks of benchmarks/data/plan_free_tasks.yaml and their hand-written judgement.

Shared by the free-task evaluation (plan_free_eval.py) and the guard-accuracy set of the
task guards (task_cases.py). The judgement is written here, independently of
apps/plan's guards: a constraint is addressed when some step's text (its action with _
as spaces, then its detail; lower case) contains one of its `any` alternatives (a number
as a whole number); a constraint with `max_cost` is also addressed by steps that give
costs, which must then add up to at most it; a repeat is two steps whose actions are the
same once lower-cased, split on spaces, _ and -, articles dropped and a trailing s cut;
a step that copies the task (80% of its distinct words, as written) addresses nothing;
a stated order [before, after] is broken when the first step holding every word of
`before` comes after the first holding every word of `after`, or either is missing.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).parents[1] / "data" / "plan_free_tasks.yaml"
SPLIT_SEED = 3535


def tasks() -> list[dict[str, Any]]:
    return list(yaml.safe_load(DATA.read_text(encoding="utf-8")))


def split_of(items: list[dict[str, Any]], seed: int = SPLIT_SEED) -> dict[str, str]:
    """Each kind's tasks shuffled with `seed` and cut in two: the first half (rounded
    up) is `tune`, the rest `heldout`."""
    rng = random.Random(seed)
    out: dict[str, str] = {}
    for kind in sorted({t["kind"] for t in items}):
        ids = sorted(t["id"] for t in items if t["kind"] == kind)
        rng.shuffle(ids)
        cut = (len(ids) + 1) // 2
        out.update({i: "tune" if n < cut else "heldout" for n, i in enumerate(ids)})
    return out


def step_text(step: dict[str, Any]) -> str:
    action = str(step.get("action", "")).replace("_", " ")
    return f"{action} {step.get('detail') or ''}".lower()


def mentions(text: str, alt: str) -> bool:
    alt = alt.lower()
    if re.fullmatch(r"[\d.,%]+", alt):  # a number: whole, not inside another
        return re.search(rf"(?<![\d.,]){re.escape(alt)}(?![\d]|[.,]\d)", text) is not None
    return alt in text


def gold_addressed(constraint: dict[str, Any], steps: list[dict[str, Any]]) -> bool:
    texts = [step_text(s) for s in steps]
    costs = [float(s["cost"]) for s in steps if isinstance(s.get("cost"), (int, float))]
    if "max_cost" in constraint and costs:
        return sum(costs) <= constraint["max_cost"]
    return any(mentions(t, alt) for t in texts for alt in constraint["any"])


def _norm_action(action: str) -> str:
    tokens = re.split(r"[\s_\-]+", action.lower())
    return " ".join(t.rstrip("s") for t in tokens if t and t not in ("the", "a", "an"))


def gold_repeats(steps: list[dict[str, Any]]) -> int:
    names = [_norm_action(str(s.get("action", ""))) for s in steps]
    return len(names) - len(set(names))


def gold_order(order: list[dict[str, Any]], steps: list[dict[str, Any]]) -> int:
    """How many stated orders the plan breaks (or leaves a side of undone)."""
    texts = [step_text(s) for s in steps]

    def first(wanted: list[str]) -> int | None:
        return next((i for i, t in enumerate(texts) if all(w in t for w in wanted)), None)

    broken = 0
    for dep in order:
        before, after = dep["words"]
        a, b = first(before), first(after)
        broken += a is None or b is None or a > b
    return broken


def copies_task(task: str, step: dict[str, Any]) -> bool:
    """Is the step the task copied (80% of the task's distinct words, as written)?"""
    said = set(re.findall(r"[a-z0-9]+", step_text(step)))
    wanted = set(re.findall(r"[a-z0-9]+", task.lower()))
    return len(said & wanted) >= 0.8 * len(wanted)


def judge(task: dict[str, Any], plan: dict[str, Any] | None) -> dict[str, Any]:
    steps = list((plan or {}).get("steps") or [])
    acting = [s for s in steps if not copies_task(task["task"], s)]
    cons = task["constraints"]
    met = [c["id"] for c in cons if acting and gold_addressed(c, acting)]
    return {
        "coverage": len(met) / len(cons),
        "missing": [c["id"] for c in cons if c["id"] not in met],
        "repeats": gold_repeats(steps),
        "order_broken": gold_order(task.get("order", []), steps) if steps else 0,
        "steps": len(steps),
    }


def spec_recall(task: dict[str, Any], spec: dict[str, Any] | None) -> float:
    """Share of the hand-written constraints the extracted spec holds (a spec
    constraint's text or terms mention one of the gold alternatives)."""
    said = " | ".join(
        f"{c.get('text', '')} {' '.join(c.get('terms', []))}".lower()
        for c in (spec or {}).get("constraints", [])
    )
    return sum(any(mentions(said, a) for a in c["any"]) for c in task["constraints"]) / len(
        task["constraints"]
    )
