"""The guarded step (seed 000's within-step loop): prompt -> model -> parse -> guard -> retry.

On a failed guard the step retries with the feedback in the context's retry channel,
up to `rmax` attempts; a `fatal` verdict ends it at once; when retries run out,
`StepFailed` carries the attempts, the last artifact, all feedback and the usage.
A parse error is feedback like any other, never a crash.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import jsonpatch

from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.digest import stable_digest
from guardsearch.core.errors import ConfigError, ParseError, StepFailed
from guardsearch.core.guard_result import GuardResult
from guardsearch.core.messages import ModelRequest
from guardsearch.core.usage import ZERO, Usage
from guardsearch.guards.base import Guard, GuardFn, as_guard
from guardsearch.guards.composite import all_of, hard
from guardsearch.guards.parse import parse_json, parse_text
from guardsearch.guards.schema import SchemaGuard, SchemaLike
from guardsearch.models.base import Model
from guardsearch.models.metered import Metered
from guardsearch.prompts import PromptTemplate, prompt

Parser = Callable[[str], Any]


@dataclass(frozen=True, kw_only=True)
class Step:
    """One guarded step: what to ask, how to parse the answer, and how to judge it.

    With `schema`, the model's output is constrained to that JSON Schema (where the
    backend supports it), parsed as JSON and checked by a hard `SchemaGuard` before
    `guard` runs.
    """

    name: str
    prompt: PromptTemplate | str
    guard: Guard | GuardFn | None = None
    schema: SchemaLike | None = None
    parser: Parser | None = None
    rmax: int = 3
    max_tokens: int = 512
    temperature: float = 0.0
    seed: int = 0
    stop: tuple[str, ...] = ()
    template: PromptTemplate = field(init=False, repr=False)
    checker: Guard | None = field(init=False, repr=False)
    json_schema: dict[str, Any] | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.rmax < 1:
            raise ConfigError(f"step {self.name!r}: rmax must be >= 1, got {self.rmax}")
        set_ = object.__setattr__  # frozen: derived fields are computed once here
        set_(self, "template", prompt(self.prompt))
        user_guard = as_guard(self.guard) if self.guard is not None else None
        if self.schema is not None:
            schema_guard = SchemaGuard(self.schema)
            set_(self, "json_schema", schema_guard.json_schema)
            checker: Guard = (
                all_of(hard(schema_guard), user_guard, name=f"{self.name}-guard")
                if user_guard is not None
                else schema_guard
            )
            set_(self, "checker", checker)
        else:
            set_(self, "json_schema", None)
            set_(self, "checker", user_guard)

    def parse(self, text: str) -> Any:
        if self.parser is not None:
            return self.parser(text)
        return parse_json(text) if self.schema is not None else parse_text(text)

    def request(
        self, context: Context, *, seed: int | None = None, **variables: Any
    ) -> ModelRequest:
        """The model request for this step in `context` (objective pinned first)."""
        schema_text = json.dumps(self.json_schema, indent=1) if self.json_schema else ""
        messages = self.template.render(context, schema=schema_text, **variables)
        return ModelRequest(
            messages=messages,
            temperature=self.temperature,
            seed=self.seed if seed is None else seed,
            max_tokens=self.max_tokens,
            stop=self.stop,
            json_schema=self.json_schema,
        )


@dataclass(frozen=True)
class Attempt:
    artifact: Artifact
    result: GuardResult


@dataclass(frozen=True, kw_only=True)
class StepOutcome:
    """A passing step: its artifact and verdict, how many attempts, all feedback, usage."""

    artifact: Artifact
    result: GuardResult
    attempts: int
    feedback: tuple[str, ...]
    usage: Usage
    context: Context

    @property
    def value(self) -> Any:
        return self.artifact.value


def as_metered(model: Model | Metered) -> Metered:
    return model if isinstance(model, Metered) else Metered(model)


async def judge(
    step: Step, artifact: Artifact, context: Context, metered: Metered, *, node: str = ""
) -> GuardResult:
    """Run the step's guard (parse failures are already failing verdicts)."""
    if artifact.parse_error is not None:
        result = GuardResult.fail(artifact.parse_error, "parse")
    elif step.checker is None:
        result = GuardResult.ok("none")
    else:
        result = await step.checker.check(artifact, context)
    metered.trace.emit(
        "guard_verdict",
        step=step.name,
        node=node or artifact.id,
        guard=result.guard,
        passed=result.passed,
        score=result.score,
        fatal=result.fatal,
        feedback=result.feedback,
    )
    return result


def make_artifact(
    step: Step,
    text: str,
    context: Context,
    *,
    attempt: int,
    parent_id: str | None = None,
    usage: Usage = ZERO,
) -> Artifact:
    """Parse `text` into an Artifact; a parse error is recorded, not raised."""
    try:
        value, error = step.parse(text), None
    except ParseError as exc:
        value, error = None, str(exc)
    except (ValueError, TypeError, KeyError, IndexError, ArithmeticError) as exc:
        value, error = None, f"not parseable: {type(exc).__name__}: {exc}"
    ident = stable_digest([step.name, context.digest, attempt, text])[:12]
    return Artifact(
        id=f"{step.name}-{ident}",
        step=step.name,
        text=text,
        value=value,
        attempt=attempt,
        parent_id=parent_id,
        context_digest=context.digest,
        usage=usage,
        parse_error=error,
    )


async def _try_patch(
    step: Step, artifact: Artifact, result: GuardResult, context: Context, metered: Metered
) -> Attempt | None:
    """Apply a guard's JSON Patch instead of regenerating, if the patched value passes."""
    if result.patch is None or artifact.value is None or result.fatal:
        return None
    try:
        patched_value = jsonpatch.apply_patch(artifact.value, list(result.patch))
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError) as exc:
        metered.trace.emit(
            "note", step=step.name, node=artifact.id, message=f"patch not applicable: {exc}"
        )
        return None
    patched = replace(
        artifact,
        id=artifact.id + "-patched",
        value=patched_value,
        text=json.dumps(patched_value, ensure_ascii=False),
    )
    verdict = await judge(step, patched, context, metered)
    metered.trace.emit(
        "patch_applied",
        step=step.name,
        node=patched.id,
        passed=verdict.passed,
        patch=list(result.patch),
    )
    return Attempt(patched, verdict) if verdict.passed else None


async def attempt_step(
    step: Step,
    context: Context,
    model: Model | Metered,
    *,
    attempt: int = 1,
    parent_id: str | None = None,
    seed: int | None = None,
    node: str = "",
    variables: Mapping[str, Any] | None = None,
) -> Attempt:
    """One attempt: one model call, parse, guard (and a guard's repair patch, if any)."""
    metered = as_metered(model)
    request = step.request(context, seed=seed, **dict(variables or {}))
    completion = await metered.complete(request, step=step.name, node=node)
    artifact = make_artifact(
        step, completion.text, context, attempt=attempt, parent_id=parent_id, usage=completion.usage
    )
    result = await judge(step, artifact, context, metered, node=node)
    if not result.passed:
        repaired = await _try_patch(step, artifact, result, context, metered)
        if repaired is not None:
            return repaired
    return Attempt(artifact, result)


async def run_step(
    step: Step,
    context: Context,
    model: Model | Metered,
    *,
    variables: Mapping[str, Any] | None = None,
    parent_id: str | None = None,
) -> StepOutcome:
    """Run `step` until its guard passes, retrying with feedback up to `step.rmax` times.

    Raises `StepFailed` (with the evidence) when retries run out or a verdict is fatal,
    and `BudgetExceeded` when the budget stops the next call.
    """
    metered = as_metered(model)
    start_usage = metered.usage
    feedback: list[str] = []
    ctx = context
    last: Artifact | None = None
    metered.trace.emit("step_start", step=step.name, rmax=step.rmax)
    for number in range(1, step.rmax + 1):
        outcome = await attempt_step(
            step, ctx, metered, attempt=number, parent_id=parent_id, variables=variables
        )
        last = outcome.artifact
        if outcome.result.passed:
            metered.trace.emit("step_end", step=step.name, passed=True, attempts=number)
            return StepOutcome(
                artifact=outcome.artifact,
                result=outcome.result,
                attempts=number,
                feedback=tuple(feedback),
                usage=metered.usage - start_usage,
                context=ctx,
            )
        feedback.append(outcome.result.feedback)
        if outcome.result.fatal:
            break
        if number < step.rmax:
            metered.trace.emit(
                "retry", step=step.name, attempt=number + 1, feedback=outcome.result.feedback
            )
            ctx = ctx.amend(feedback=outcome.result.feedback)
            parent_id = outcome.artifact.id
    fatal = bool(feedback) and outcome.result.fatal
    metered.trace.emit(
        "step_end", step=step.name, passed=False, attempts=len(feedback), fatal=fatal
    )
    raise StepFailed(
        step.name,
        attempts=len(feedback),
        last_artifact=last,
        feedback=feedback,
        usage=metered.usage - start_usage,
        fatal=fatal,
    )
