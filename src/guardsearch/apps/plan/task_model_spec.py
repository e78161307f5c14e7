"""The model's reading of a free task, guarded: phrases the task says that code missed.

Code reads numbers, names, dates and artefacts (task_extract.py) but not every
requirement in words ("keeping the old tiles", "mountain huts", "regression test"). One
grammar-constrained call asks the model for the phrases a plan must address, copied
from the task; a guard accepts the answer only when every phrase is in the task (all of
its words, normalised), so the model cannot add a constraint the task does not state.
A rejected answer is retried with that feedback (`rmax` 2). Accepted phrases that no
code constraint already covers join the spec as `requirement` constraints (a step
addresses one by saying its last word or the whole phrase), and the spec's `source`
becomes `code+model`. When the step fails, the code's spec stands and its `source`
says so (`code; model phrases rejected: ...`) — the run is never silently different.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from guardsearch.apps.plan.task_spec import Constraint, TaskSpec
from guardsearch.apps.plan.task_text import words
from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.errors import StepFailed
from guardsearch.core.guard_result import GuardResult
from guardsearch.models.base import Model
from guardsearch.models.metered import Metered
from guardsearch.prompts import PromptTemplate
from guardsearch.steps.step import Step, run_step

MAX_PHRASES = 8
SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "constraints": {
            "type": "array",
            "items": {"type": "string", "minLength": 2, "maxLength": 40},
            "minItems": 1,
            "maxItems": MAX_PHRASES,
        }
    },
    "required": ["constraints"],
    "additionalProperties": False,
}


def grounded(task: str, phrase: str) -> bool:
    """Is every word of `phrase` a word of `task` (normalised)?"""
    have = set(words(task))
    wanted = words(phrase)
    return bool(wanted) and all(w in have for w in wanted)


@dataclass(frozen=True)
class GroundingGuard:
    """Every phrase the model lists is in the task (else: which are not)."""

    task: str
    name: str = "spec-grounding"

    async def check(self, artifact: Artifact, context: Context) -> GuardResult:
        phrases = [p for p in artifact.value.get("constraints", []) if isinstance(p, str)]
        invented = [p for p in phrases if not grounded(self.task, p)]
        if invented:
            listed = "; ".join(repr(p) for p in invented)
            return GuardResult.fail(
                f"not in the task: {listed}. Copy phrases word for word from the task",
                self.name,
            )
        return GuardResult.ok(self.name)


def _covered(spec: TaskSpec, phrase: str) -> bool:
    """Does a constraint of `spec` already hold this phrase (one of its terms is in it)?"""
    have = set(words(phrase))
    task_words = words(spec.task)
    if set(have) >= set(task_words):  # the task itself, not a part of it
        return True
    return any(all(w in have for w in alt) for c in spec.constraints for alt in c.alternatives())


def with_phrases(spec: TaskSpec, phrases: list[str]) -> TaskSpec:
    """`spec` plus a `requirement` constraint for each phrase it does not cover yet."""
    added: list[Constraint] = []
    for n, phrase in enumerate(phrases, 1):
        if _covered(spec.model_copy(update={"constraints": spec.constraints + added}), phrase):
            continue
        last = words(phrase)[-1]
        added.append(
            Constraint(id=f"requirement-{n}", kind="requirement", text=phrase.strip()[:80],
                       terms=[phrase.split()[-1], phrase] if len(last) > 2 else [phrase])
        )  # fmt: skip
    room = 16 - len(spec.constraints)
    return spec.model_copy(
        update={"constraints": spec.constraints + added[:room], "source": "code+model"}
    )


async def model_spec(spec: TaskSpec, model: Model | Metered) -> tuple[TaskSpec, int]:
    """`spec` with the model's grounded phrases added; also the calls it took."""
    step = Step(
        name="spec",
        prompt=PromptTemplate.packaged("plan_free_spec"),
        schema=SPEC_SCHEMA,
        guard=GroundingGuard(spec.task),
        rmax=2,
        max_tokens=120,
    )
    try:
        outcome = await run_step(step, Context(objective=spec.task), model)
    except StepFailed as exc:
        last = exc.feedback[-1] if exc.feedback else "no answer"
        source = f"code; model phrases rejected: {last}"
        return spec.model_copy(update={"source": source[:200]}), exc.attempts
    phrases = [p for p in outcome.value["constraints"] if isinstance(p, str)]
    return with_phrases(spec, phrases), outcome.attempts
