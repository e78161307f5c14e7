"""The guarded step (the loop within one step): prompt -> model -> parse -> guard -> retry.

On a failed guard the step retries with the feedback in the context's retry channel,
up to `rmax` attempts; a `fatal` verdict ends it at once; when retries run out,
`StepFailed` carries the attempts, the last artifact, all feedback and the usage.
A parse error is feedback like any other, never a crash.

Feedback steers (issue 16):

- **prevent**: the constraints the step's guards declare are compiled into the
  request's JSON Schema (guards/constraints.py), so a constraining backend cannot
  decode an output that breaks them;
- **repair**: a failed verdict's JSON Patch is applied and the guards run again; a
  repair they pass is accepted without a model call (`patch_applied`);
- **diversify**: attempt k samples by the step's `Schedule` (default 0 -> 0.7 -> 1.0
  with fresh seeds), the retry prompt lists the outputs already judged, an enum that
  decides the whole output loses the values already tried, and an output that repeats
  an earlier attempt is dropped before any guard runs (`candidate_dropped`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.digest import canonical_json, stable_digest
from guardsearch.core.errors import ConfigError, ParseError, StepFailed
from guardsearch.core.guard_result import GuardResult
from guardsearch.core.messages import CALL_ROLES, CallInfo, ModelRequest
from guardsearch.core.schedule import Schedule
from guardsearch.core.steering import Steering
from guardsearch.core.usage import ZERO, Usage
from guardsearch.guards.base import Guard, GuardFn, as_guard
from guardsearch.guards.composite import all_of, hard
from guardsearch.guards.constraints import (
    compile_constraints,
    constraint_names,
    declared_constraints,
    exclude_values,
    satisfies,
    without_mark,
)
from guardsearch.guards.diff import apply_patch
from guardsearch.guards.parse import parse_json, parse_text
from guardsearch.guards.schema import SchemaGuard, SchemaLike
from guardsearch.models.base import Model, enforces_schema
from guardsearch.models.metered import Metered
from guardsearch.prompts import PromptTemplate, prompt
from guardsearch.sync import run_sync

Parser = Callable[[str], Any]


@dataclass(frozen=True, kw_only=True)
class Step:
    """One guarded step: what to ask, how to parse the answer, and how to judge it.

    With `schema`, the model's output is constrained to that JSON Schema (where the
    backend supports it), parsed as JSON and checked by a hard `SchemaGuard` before
    `guard` runs; the constraints `guard` declares are compiled into it per request.
    `schedule` sets the temperature and seed of attempt k (default: `Schedule()`,
    0 -> 0.7 -> 1.0 with fresh seeds; `Schedule.fixed()` repeats the first attempt's).
    `role` says what the step's calls are for (propose, judge, repair, code): a model
    ladder may give each role its own model.
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
    schedule: Schedule | str | list[float] | None = None
    role: str = "propose"
    template: PromptTemplate = field(init=False, repr=False)
    checker: Guard | None = field(init=False, repr=False)
    rule: Guard | None = field(init=False, repr=False)
    json_schema: dict[str, Any] | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.rmax < 1:
            raise ConfigError(f"step {self.name!r}: rmax must be >= 1, got {self.rmax}")
        if self.role not in CALL_ROLES:
            raise ConfigError(
                f"step {self.name!r}: role must be one of {', '.join(CALL_ROLES)}, "
                f"got {self.role!r}"
            )
        set_ = object.__setattr__  # frozen: derived fields are computed once here
        set_(self, "template", prompt(self.prompt))
        set_(self, "schedule", Schedule.of(self.schedule))
        user_guard = as_guard(self.guard) if self.guard is not None else None
        set_(self, "rule", user_guard)
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

    def sampling(self, attempt: int) -> tuple[float, int]:
        """(temperature, seed) of attempt `attempt` (1-based) by the step's schedule."""
        schedule = Schedule.of(self.schedule)
        return (
            schedule.temperature(attempt, self.temperature),
            self.seed + schedule.seed_offset(attempt),
        )

    def request(
        self,
        context: Context,
        *,
        seed: int | None = None,
        call: CallInfo | None = None,
        **variables: Any,
    ) -> ModelRequest:
        """The model request for this step in `context` (objective pinned first).

        `call` is what the guards said so far (default: a first call in the step's role).
        """
        return self.build_request(context, seed=seed, call=call, variables=variables)

    def build_request(
        self,
        context: Context,
        *,
        seed: int | None = None,
        temperature: float | None = None,
        tried: Sequence[Any] = (),
        variables: Mapping[str, Any] | None = None,
        call: CallInfo | None = None,
    ) -> ModelRequest:
        """The request with the guards' declared constraints compiled into its schema
        and, where one enum decides the whole output, the values in `tried` excluded;
        `call` is what the guards said so far (a model ladder reads it)."""
        schema = self.schema_for(context, tried)
        schema_text = json.dumps(without_mark(schema), indent=1) if schema else ""
        messages = self.template.render(context, schema=schema_text, **dict(variables or {}))
        return ModelRequest(
            messages=messages,
            temperature=self.temperature if temperature is None else temperature,
            seed=self.seed if seed is None else seed,
            max_tokens=self.max_tokens,
            stop=self.stop,
            json_schema=schema,
            call=call or CallInfo(role=self.role),
        )

    def schema_for(self, context: Context, tried: Sequence[Any] = ()) -> dict[str, Any] | None:
        """The request schema in `context`: the step's, narrowed by its guards' constraints
        (guards/constraints.py) and without the values already `tried` when one enum
        decides the output (every value tried: the schema as it was)."""
        if self.json_schema is None:
            return None
        schema = self.json_schema
        declared = declared_constraints(self.rule, context) if self.rule is not None else []
        if declared:
            schema, _, _ = compile_constraints(schema, declared)
        if tried:
            narrowed = exclude_values(schema, tried)
            if narrowed is not None:
                schema = narrowed
        return schema


@dataclass(frozen=True)
class Attempt:
    """One attempt's artifact and verdict. `repeat_of` is the attempt number of the
    earlier identical output when this one repeated it (its verdict is that one's:
    no guard ran); `repaired` when a guard's patch made the artifact pass."""

    artifact: Artifact
    result: GuardResult
    repeat_of: int | None = None
    repaired: bool = False
    prevented: bool = False


@dataclass(frozen=True, kw_only=True)
class StepOutcome:
    """A passing step: its artifact and verdict, how many attempts, all feedback, usage,
    and how the feedback steered (`steering`: outputs, repeats, repairs, prevented)."""

    artifact: Artifact
    result: GuardResult
    attempts: int
    feedback: tuple[str, ...]
    usage: Usage
    context: Context
    steering: Steering = field(default_factory=Steering)

    @property
    def value(self) -> Any:
        return self.artifact.value


def as_metered(model: Model | Metered) -> Metered:
    return model if isinstance(model, Metered) else Metered(model)


async def judge(
    step: Step,
    artifact: Artifact,
    context: Context,
    metered: Metered,
    *,
    node: str = "",
    stage: str = "evaluate",
    prevented: bool = False,
) -> GuardResult:
    """Run the step's guard (parse failures are already failing verdicts).

    `stage` is "evaluate" for a model's output and "repair" for a repaired value's
    re-check (no new output); `prevented` marks an output decoded under its guards'
    constraints by a backend that enforces them (core/steering.py counts both).
    """
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
        stage=stage,
        prevented=prevented,
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


def output_key(artifact: Artifact) -> str:
    """What makes two outputs the same: the parsed value (so formatting does not count),
    else the stripped text."""
    if artifact.value is not None:
        try:
            return "v:" + canonical_json(artifact.value)
        except (RecursionError, ValueError, TypeError):
            pass  # a pathologically nested value: its text identifies it as well
    return "t:" + artifact.text.strip()


MAX_REPAIRS = 3  # a repaired value may carry a further fix; chains stop here


async def repair(
    step: Step, artifact: Artifact, result: GuardResult, context: Context, metered: Metered
) -> Attempt | None:
    """Apply a failed verdict's JSON Patch and judge again, instead of regenerating.

    A re-check that fails with a patch of its own is repaired again (up to
    `MAX_REPAIRS`). Each application is a `patch_applied` event with the patch, the
    guard and whether the repaired value passed; the repair is accepted only when it
    passes, and costs no model call.
    """
    current, verdict = artifact, result
    for round_ in range(1, MAX_REPAIRS + 1):
        if verdict.patch is None or current.value is None or verdict.fatal:
            return None
        try:
            value = apply_patch(current.value, verdict.patch)
        except ValueError as exc:
            metered.trace.emit(
                "note", step=step.name, node=current.id, message=f"patch not applicable: {exc}"
            )
            return None
        patched = replace(
            current,
            id=f"{artifact.id}-repair{round_}",
            value=value,
            text=json.dumps(value, ensure_ascii=False),
            parse_error=None,
        )
        again = await judge(step, patched, context, metered, stage="repair")
        metered.trace.emit(
            "patch_applied",
            step=step.name,
            node=patched.id,
            passed=again.passed,
            patch=list(verdict.patch),
            guard=verdict.guard,
            fixed=verdict.feedback,
        )
        if again.passed:
            return Attempt(patched, again, repaired=True)
        current, verdict = patched, again
    return None


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
    seen: Mapping[str, Attempt] | None = None,
    call: CallInfo | None = None,
) -> Attempt:
    """One attempt: one model call, parse, guard (and a guard's repair patch, if any).

    The call samples by the step's schedule for `attempt` (`seed` overrides the seed).
    An output that repeats one in `seen` (output key -> earlier attempt) is dropped
    before any guard runs: a `candidate_dropped` event, and the earlier verdict.
    `call` says what the guards said in earlier attempts (`run_step` fills it in).
    """
    metered = as_metered(model)
    temperature, scheduled_seed = step.sampling(attempt)
    tried = [a.artifact.value for a in (seen or {}).values() if a.artifact.value is not None]
    request = step.build_request(
        context,
        seed=scheduled_seed if seed is None else seed,
        temperature=temperature,
        tried=tried,
        variables=variables,
        call=call,
    )
    completion = await metered.complete(request, step=step.name, node=node)
    artifact = make_artifact(
        step, completion.text, context, attempt=attempt, parent_id=parent_id, usage=completion.usage
    )
    if artifact.parse_error is not None and completion.finish_reason == "length":
        artifact = replace(
            artifact,
            parse_error=f"{artifact.parse_error} (the answer was cut off at its limit of "
            f"{request.max_tokens} tokens: write a shorter answer)",
        )
    earlier = (seen or {}).get(output_key(artifact))
    if earlier is not None:
        metered.trace.emit(
            "candidate_dropped",
            step=step.name,
            node=node or artifact.id,
            reason="duplicate",
            duplicate_of=earlier.artifact.id,
            attempt=attempt,
            repeats_attempt=earlier.artifact.attempt,
            text=artifact.text[:200],
        )
        return Attempt(artifact, earlier.result, repeat_of=earlier.artifact.attempt)
    prevented = (
        bool(constraint_names(request.json_schema))
        and enforces_schema(metered)
        and artifact.parse_error is None
        and request.json_schema is not None
        and satisfies(artifact.value, request.json_schema)
    )
    result = await judge(step, artifact, context, metered, node=node, prevented=prevented)
    if not result.passed:
        repaired = await repair(step, artifact, result, context, metered)
        if repaired is not None:
            return replace(repaired, prevented=prevented)
    return Attempt(artifact, result, prevented=prevented)


def call_after(call: CallInfo, outcome: Attempt) -> CallInfo:
    """`call` once `outcome` (a failed or repeated attempt) is known: what the next
    attempt tells a model ladder (one more rejection and its guard, or one more repeat)."""
    if outcome.repeat_of is not None:
        return replace(call, repeats=call.repeats + 1)
    return replace(
        call,
        rejections=call.rejections + 1,
        verdicts=tuple(dict.fromkeys((*call.verdicts, outcome.result.guard))),
    )


async def run_step(
    step: Step,
    context: Context,
    model: Model | Metered,
    *,
    variables: Mapping[str, Any] | None = None,
    parent_id: str | None = None,
) -> StepOutcome:
    """Run `step` until its guard passes, retrying with feedback up to `step.rmax` times.

    Attempt k samples by the step's schedule; each retry's prompt carries the feedback
    and the outputs already judged (the retry channel); an output repeating an earlier
    attempt is dropped unjudged and counts as an attempt, not as feedback.
    Raises `StepFailed` (with the evidence) when retries run out or a verdict is fatal,
    and `BudgetExceeded` when the budget stops the next call.
    """
    metered = as_metered(model)
    start_usage, counts, ctx = metered.usage, Steering(), context
    feedback: list[str] = []
    seen: dict[str, Attempt] = {}
    last: Artifact | None = None
    fatal = False
    call = CallInfo(role=step.role)  # what a model ladder reads: rejections, repeats so far
    metered.trace.emit("step_start", step=step.name, rmax=step.rmax)
    for number in range(1, step.rmax + 1):
        outcome = await attempt_step(
            step,
            ctx,
            metered,
            attempt=number,
            parent_id=parent_id,
            variables=variables,
            seen=seen,
            call=call,
        )
        last = outcome.artifact
        counts = counts + Steering(
            outputs=1,
            repeats=outcome.repeat_of is not None,
            repairs=outcome.repaired,
            prevented=outcome.prevented,
        )
        if outcome.result.passed and outcome.repeat_of is None:
            metered.trace.emit(
                "step_end", step=step.name, passed=True, attempts=number, steering=counts.as_dict()
            )
            return StepOutcome(
                artifact=outcome.artifact,
                result=outcome.result,
                attempts=number,
                feedback=tuple(feedback),
                usage=metered.usage - start_usage,
                context=ctx,
                steering=counts,
            )
        call = call_after(call, outcome)
        if outcome.repeat_of is not None:
            # Nothing was judged: no new feedback. The next attempt samples by the
            # schedule (warmer, a fresh seed), with what was tried already listed.
            if number < step.rmax:
                metered.trace.emit(
                    "retry",
                    step=step.name,
                    attempt=number + 1,
                    reason="duplicate",
                    repeats_attempt=outcome.repeat_of,
                )
            continue
        seen[output_key(outcome.artifact)] = outcome
        feedback.append(outcome.result.feedback)
        if outcome.result.fatal:
            fatal = True
            break
        if number < step.rmax:
            metered.trace.emit(
                "retry", step=step.name, attempt=number + 1, feedback=outcome.result.feedback
            )
            ctx = ctx.amend(feedback=outcome.result.feedback, tried=(outcome.artifact.text, ""))
            parent_id = outcome.artifact.id
    metered.trace.emit(
        "step_end",
        step=step.name,
        passed=False,
        attempts=number,
        fatal=fatal,
        steering=counts.as_dict(),
    )
    used = metered.usage - start_usage
    raise StepFailed(
        step.name, attempts=number, last_artifact=last, feedback=feedback, usage=used,
        fatal=fatal, steering=counts,
    )  # fmt: skip


run_step_sync = run_sync(run_step)
