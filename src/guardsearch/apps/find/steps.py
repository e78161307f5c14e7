"""The model steps of `find`: plan (with its reflection block), judge, replan.

Each is a JSON-schema constrained, guarded step (steps/step.py): the schemas are
small and bounded so the embedded 0.5B model decodes them under a grammar, and code
guards send feedback on retry.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from guardsearch.apps.find.request import (
    grounded_words,
    item_noun,
    request_qualifier,
    ungrounded,
)
from guardsearch.apps.find.spec import forms
from guardsearch.corpus.query import terms
from guardsearch.guards.base import FunctionGuard
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


def _type_problem(
    draft: FindPlanDraft, asked: set[str], wanted: tuple[str, str] | None
) -> str | None:
    one, many = forms(draft.item_type.split()[-1] if draft.item_type.split() else "")
    if wanted is not None and one != wanted[0]:
        return (
            f"item_type {draft.item_type!r} is not the items the request asks for; "
            f"write item_type {wanted[0]!r}"
        )
    if one not in asked and many not in asked:
        return (
            f"item_type {draft.item_type!r} is not in the request; use the noun of the "
            "request that names the items wanted, in the singular"
        )
    return None


def _grounding_problem(draft: FindPlanDraft, request: str, condition: str) -> str | None:
    """Feedback naming what the plan wrote that is not in the request, or left out."""
    extra = ungrounded(draft.qualifier, request)
    if extra:
        return (
            f"qualifier {draft.qualifier!r} has words that are not in the request: "
            f"{', '.join(extra)}; write qualifier {condition!r}"
        )
    missing = ungrounded(condition, draft.qualifier)
    if missing:
        return (
            f"qualifier {draft.qualifier!r} leaves out the request's condition "
            f"({', '.join(missing)}); write qualifier {condition!r}"
        )
    stray = [w for k in draft.keywords for w in ungrounded(k, request)]
    if stray:
        return (
            f"keywords {', '.join(dict.fromkeys(stray))} are not in the request; "
            "use words of the request"
        )
    return None


def plan_step(request: str, rmax: int = 3) -> Step:
    """The plan step. Its guard holds the item type to the request's item noun
    (`item_noun`: "painting" for "paintings by Spanish painters", never "painter" or
    "Spanish"), the qualifier to the rest of the request's condition in its own words
    (`request_qualifier`: "in Africa" for "lakes in Africa"; a qualifier the request
    does not hold is refused, naming its words) and every keyword to a word of the
    request; it declares these as constraints on the plan's schema (enums)."""
    asked = set(terms(request))
    noun = item_noun(request)
    wanted = forms(noun) if noun else None
    condition = request_qualifier(request)

    def plan_guard(value: object) -> str | None:
        draft = FindPlanDraft.model_validate(value)
        return _type_problem(draft, asked, wanted) or _grounding_problem(draft, request, condition)

    properties: dict[str, object] = {"qualifier": {"enum": [condition]}}
    words = grounded_words(request)
    if words:
        properties["keywords"] = {"items": {"enum": words}}
    if wanted:
        properties["item_type"] = {"enum": list(dict.fromkeys(wanted))}
    return Step(
        name="find-plan",
        prompt=PromptTemplate.packaged("find_plan"),
        schema=FindPlanDraft,
        guard=FunctionGuard(plan_guard, "plan_guard", constraint={"properties": properties}),
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


def replan_step(tried: list[str], item_type: str, rmax: int = 3) -> Step:
    """The replan step. Its keywords are new (not a tried query) and name the items
    wanted (a form of `item_type`): the prompt's example ("painting", "Monet") written
    back for an opera request is refused, as the plan guard refuses it."""
    tried_sets = [frozenset(terms(q)) for q in tried]
    wanted = set(forms(item_type))

    def replan_guard(value: object) -> str | None:
        draft = ReplanDraft.model_validate(value)
        words = frozenset(w for k in draft.keywords for w in terms(k))
        if not words:
            return "give keywords with content words"
        if words in tried_sets:
            return "these keywords were already tried; give different ones"
        if not words & wanted:
            return f"the keywords must name the items wanted: include {item_type!r}"
        return None

    return Step(
        name="find-replan",
        prompt=PromptTemplate.packaged("find_replan"),
        schema=ReplanDraft,
        guard=replan_guard,
        rmax=rmax,
        max_tokens=80,
    )
