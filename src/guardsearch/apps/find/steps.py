"""The model steps of `find`: plan (with its reflection block), judge, replan.

Each is a JSON-schema constrained, guarded step (steps/step.py): the schemas are
small and bounded so the embedded 0.5B model decodes them under a grammar, and code
guards send feedback on retry.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from guardsearch.apps.find.spec import forms
from guardsearch.corpus.query import terms
from guardsearch.loops.review.reflection import Reflection
from guardsearch.prompts import PromptTemplate
from guardsearch.steps.step import Step

Domain = Literal["art", "people", "places", "science", "general"]
Keyword = Annotated[str, Field(min_length=2, max_length=30)]


class FindPlanDraft(BaseModel):
    """What the planner writes: the reflection block and the first search."""

    model_config = ConfigDict(extra="forbid")

    reflection: Reflection
    item_type: str = Field(min_length=2, max_length=30)
    qualifier: str = Field(max_length=60)
    keywords: list[Keyword] = Field(min_length=1, max_length=4)
    domain: Domain


class JudgeDraft(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answer: Literal["yes", "no"]
    reason: str = Field(max_length=80)


class ReplanDraft(BaseModel):
    model_config = ConfigDict(extra="forbid")

    keywords: list[Keyword] = Field(min_length=1, max_length=4)
    reason: str = Field(max_length=80)


def plan_step(request: str, rmax: int = 3) -> Step:
    asked = set(terms(request))

    def plan_guard(value: object) -> str | None:
        draft = FindPlanDraft.model_validate(value)
        one, many = forms(draft.item_type.split()[-1] if draft.item_type.split() else "")
        if one not in asked and many not in asked:
            return (
                f"item_type {draft.item_type!r} is not in the request; use the noun of the "
                "request that names the items wanted, in the singular"
            )
        words = {w for k in draft.keywords for w in terms(k)}
        if not words & (asked | {one, many}):
            return "the keywords share no word with the request; use words from the request"
        return None

    return Step(
        name="find-plan",
        prompt=PromptTemplate.packaged("find_plan"),
        schema=FindPlanDraft,
        guard=plan_guard,
        rmax=rmax,
        max_tokens=220,
    )


def judge_step(rmax: int = 2) -> Step:
    return Step(
        name="find-judge",
        prompt=PromptTemplate.packaged("find_judge"),
        schema=JudgeDraft,
        rmax=rmax,
        max_tokens=40,
    )


def replan_step(tried: list[str], rmax: int = 3) -> Step:
    tried_sets = [frozenset(terms(q)) for q in tried]

    def replan_guard(value: object) -> str | None:
        draft = ReplanDraft.model_validate(value)
        words = frozenset(w for k in draft.keywords for w in terms(k))
        if not words:
            return "give keywords with content words"
        if words in tried_sets:
            return "these keywords were already tried; give different ones"
        return None

    return Step(
        name="find-replan",
        prompt=PromptTemplate.packaged("find_replan"),
        schema=ReplanDraft,
        guard=replan_guard,
        rmax=rmax,
        max_tokens=80,
    )
