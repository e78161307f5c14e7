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
from rich.text import Text

from guardsearch.cli.errors import EXIT_FAILED, EXIT_USAGE, one_line
from guardsearch.core.errors import ConfigError, GuardsearchError
from guardsearch.core.events import Event, Trace

err = Console(stderr=True, highlight=False)
out = Console(highlight=False)

__all__ = ["EXIT_FAILED", "EXIT_USAGE", "err", "fail", "out", "print_json", "traced"]


def print_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2, default=str) + "\n")
    sys.stdout.flush()


def fail(message: str, code: int = EXIT_USAGE, *, as_json: bool = False) -> NoReturn:
    """End the command: `error: MESSAGE` on stderr, on one line however long (scripts and
    people grep for it), never read as markup; with `as_json` also `{"ok": false, ...}`."""
    message = one_line(message)
    if as_json:
        print_json({"ok": False, "error": message})
    err.print(Text.assemble(("error:", "red"), " ", message), soft_wrap=True)
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


def open_sink(path: Path) -> Any:
    """A JSONL trace file opened for appending; a path that cannot be written (a folder,
    a missing folder, no permission) is a usage error, found before any work is done."""
    from guardsearch.jsonl import JsonlSink

    try:
        return JsonlSink(path)
    except OSError as exc:
        fail(f"cannot write trace file {path}: {exc.strerror or exc}")


@contextmanager
def traced(narrator: Callable[[Event], None], path: Path | None) -> Iterator[Trace]:
    """A run's event trace: narrated by `narrator` and, given a path, appended to a JSONL
    file that is closed however the block ends."""
    events = Trace()
    events.subscribe(narrator)
    sink = open_sink(path) if path else None
    if sink:
        events.subscribe(sink)
    try:
        yield events
    finally:
        if sink:
            sink.close()
