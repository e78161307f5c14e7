"""Guarded steps and prompt templates."""

from guardsearch.steps.prompt import PromptTemplate, prompt
from guardsearch.steps.step import (
    Attempt,
    Step,
    StepOutcome,
    as_metered,
    attempt_step,
    judge,
    make_artifact,
    run_step,
)

__all__ = [
    "Attempt",
    "PromptTemplate",
    "Step",
    "StepOutcome",
    "as_metered",
    "attempt_step",
    "judge",
    "make_artifact",
    "prompt",
    "run_step",
]
