"""CLI output: results to stdout (plain or one JSON object), progress to stderr only."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console

from guardsearch.core.errors import ConfigError, GuardsearchError
from guardsearch.core.events import Event, Trace

err = Console(stderr=True, highlight=False)
out = Console(highlight=False)

EXIT_FAILED = 1
EXIT_USAGE = 2


def print_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2, default=str) + "\n")
    sys.stdout.flush()


def fail(message: str, code: int = EXIT_USAGE, *, as_json: bool = False) -> NoReturn:
    if as_json:
        print_json({"ok": False, "error": message})
    # One line however long: scripts and people grep for it (no wrapping at 80 columns).
    err.print(f"[red]error:[/red] {message}", soft_wrap=True)
    raise typer.Exit(code)


def exit_for(exc: GuardsearchError) -> int:
    return EXIT_USAGE if isinstance(exc, ConfigError) else EXIT_FAILED


def progress_printer(quiet: bool = False) -> Any:
    """A Trace subscriber that narrates model calls and verdicts on stderr."""

    def show(event: Event) -> None:
        if quiet:
            return
        d = event.data
        if event.kind == "model_call":
            err.print(
                f"[dim]model {d.get('model')}: {d.get('prompt_tokens')}+"
                f"{d.get('completion_tokens')} tokens in {d.get('wall_s', 0):.1f}s[/dim]"
            )
        elif event.kind == "guard_verdict" and not d.get("passed"):
            err.print(f"[yellow]guard {d.get('guard')}:[/yellow] {d.get('feedback')}")
        elif event.kind == "retry":
            # a guarded step counts attempts; a search names the node it expands again
            where = f"attempt {d['attempt']}" if "attempt" in d else f"node {d.get('node')}"
            err.print(f"[dim]retrying {event.step} ({where})[/dim]")
        elif event.kind == "backtrack":
            err.print(f"[magenta]backtrack[/magenta] {d}")
        elif event.kind == "budget_exceeded":
            err.print(f"[red]budget:[/red] {d.get('reason')}")

    return show


@contextmanager
def traced(narrator: Callable[[Event], None], path: Path | None) -> Iterator[Trace]:
    """A run's event trace: narrated by `narrator` and, given a path, appended to a JSONL
    file that is closed however the block ends."""
    from guardsearch.jsonl import JsonlSink

    events = Trace()
    events.subscribe(narrator)
    sink = JsonlSink(path) if path else None
    if sink:
        events.subscribe(sink)
    try:
        yield events
    finally:
        if sink:
            sink.close()
