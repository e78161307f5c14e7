"""`guardsearch ask`: one guarded step from the command line."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from guardsearch.cli.output import (
    err,
    exit_for,
    fail,
    open_sink,
    out,
    print_json,
    progress_printer,
)
from guardsearch.core.budget import Budget
from guardsearch.core.context import Context
from guardsearch.core.errors import GuardsearchError, StepFailed
from guardsearch.core.events import Trace
from guardsearch.guards.schema import load_schema_file
from guardsearch.models.metered import Metered
from guardsearch.models.spec import model_from_spec
from guardsearch.prompts import PromptTemplate
from guardsearch.steps.step import Step, run_step


def ask(
    prompt: Annotated[str, typer.Argument(help="What to ask; it becomes the pinned objective.")],
    schema: Annotated[
        Path | None, typer.Option(help="JSON Schema file: output is constrained and checked.")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model spec (default: embedded).")] = None,
    rmax: Annotated[int, typer.Option(min=1, help="Attempts before giving up.")] = 3,
    max_tokens: Annotated[int, typer.Option(min=1, help="Completion tokens per call.")] = 256,
    budget_calls: Annotated[int | None, typer.Option(min=1, help="Cap on model calls.")] = None,
    trace: Annotated[Path | None, typer.Option(help="Append the event trace (JSONL).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Ask the model once, guarded: parse, check, retry with feedback up to --rmax."""
    if not prompt.strip():
        fail("the prompt is empty", as_json=as_json)
    try:
        json_schema = load_schema_file(str(schema)) if schema else None
        step = Step(
            name="ask",
            prompt=PromptTemplate.packaged("ask"),
            schema=json_schema,
            rmax=rmax,
            max_tokens=max_tokens,
        )
        chosen = model_from_spec(model)
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)
    events = Trace()
    events.subscribe(progress_printer())
    sink = open_sink(trace) if trace else None
    if sink:
        events.subscribe(sink)
    metered = Metered(chosen, Budget.of(calls=budget_calls), events)
    started = time.perf_counter()
    result: dict[str, Any] = {"model": chosen.name}
    code = 0
    try:
        outcome = asyncio.run(run_step(step, Context(objective=prompt), metered))
        result.update(
            ok=True,
            value=outcome.value,
            attempts=outcome.attempts,
            feedback=list(outcome.feedback),
            steering=outcome.steering.as_dict(),
        )
    except StepFailed as exc:
        code = 1
        result.update(
            ok=False,
            value=None,
            attempts=exc.attempts,
            feedback=exc.feedback,
            steering=exc.steering.as_dict(),
            error=str(exc),
            last_output=exc.last_artifact.text if exc.last_artifact else None,
        )
    except GuardsearchError as exc:
        code = exit_for(exc)
        result.update(
            ok=False,
            value=None,
            attempts=len(events.of_kind("model_call")),
            feedback=[],
            error=str(exc),
        )
    finally:
        if sink:
            sink.close()
    used = metered.usage
    result["usage"] = used.as_dict()
    result["seconds"] = round(time.perf_counter() - started, 3)
    if as_json:
        print_json(result)
    elif result["ok"]:
        value = result["value"]
        out.print(value if isinstance(value, str) else _pretty(value))
        err.print(f"[dim]{result['attempts']} attempt(s), {used.describe()}[/dim]")
    else:  # `error: ...` on one line, as every command ends a failure (README)
        fail(str(result.get("error")), code)
    raise typer.Exit(code)


def _pretty(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, indent=2)
