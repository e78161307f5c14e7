"""The reflection block a plan carries: plan, assumptions, risks, success criteria."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

Line = Annotated[str, Field(max_length=90)]


class Reflection(BaseModel):
    """Why the plan is what it is: written before acting, kept in the transcript."""

    model_config = ConfigDict(extra="forbid")

    plan: str = Field(min_length=3, max_length=160)
    assumptions: list[Line] = Field(max_length=3)
    risks: list[Line] = Field(max_length=3)
    success_criteria: str = Field(min_length=3, max_length=120)
