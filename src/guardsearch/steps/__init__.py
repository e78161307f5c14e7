"""Guarded steps: prompt -> model -> parse -> guard -> retry."""

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
    "Step",
    "StepOutcome",
    "as_metered",
    "attempt_step",
    "judge",
    "make_artifact",
    "run_step",
]
