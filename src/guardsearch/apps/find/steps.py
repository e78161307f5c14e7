"""The model steps of `find`: plan (with its reflection block), judge, replan.

Each is a JSON-schema constrained, guarded step (steps/step.py): the schemas are
small and bounded so the embedded 0.5B model decodes them under a grammar, and code
guards send feedback on retry.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

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


# Where the request's first noun phrase (the items wanted) ends.
_REQUEST_PHRASE_END = re.compile(
    r"\s+(?:by|from|in|of|for|that|which|who|with|about|at|on|made|written|painted|"
    r"composed|directed|built|located|set)\b|[,;:()]",
    re.I,
)
_LEAD = re.compile(r"^\s*(?:(?:a\s+)?list\s+of|examples\s+of|some|famous|find|show\s+me)\s+", re.I)


def item_noun(request: str) -> str:
    """The noun naming the items a request asks for: the head of its first noun phrase
    ("paintings by Spanish painters" -> paintings, "famous Italian operas" -> operas);
    '' when there is none."""
    text = _LEAD.sub("", " ".join(request.split()))
    head = _REQUEST_PHRASE_END.split(text, maxsplit=1)[0]
    words = terms(head)
    return words[-1] if words else ""


def plan_step(request: str, rmax: int = 3) -> Step:
    """The plan step; its guard holds the item type to the request's item noun
    (`item_noun`: "painting" for "paintings by Spanish painters", never "painter" or
    "Spanish"), a rule it also declares as a constraint on the plan's schema."""
    asked = set(terms(request))
    noun = item_noun(request)
    wanted = forms(noun) if noun else None

    def plan_guard(value: object) -> str | None:
        draft = FindPlanDraft.model_validate(value)
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
        words = {w for k in draft.keywords for w in terms(k)}
        if not words & (asked | {one, many}):
            return "the keywords share no word with the request; use words from the request"
        return None

    shape = {"properties": {"item_type": {"enum": list(dict.fromkeys(wanted))}}} if wanted else None
    return Step(
        name="find-plan",
        prompt=PromptTemplate.packaged("find_plan"),
        schema=FindPlanDraft,
        guard=FunctionGuard(plan_guard, "plan_guard", constraint=shape),
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
