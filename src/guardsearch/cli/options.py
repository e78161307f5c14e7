"""The options several commands share, declared once (same flag, same help everywhere).

A flag's name comes from the parameter's (`model` -> `--model`), as typer names any
option, except `AsJson`, whose parameter is `as_json` and whose flag is `--json`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

ModelSpec = Annotated[str | None, typer.Option(help="Model spec (default: embedded).")]
BudgetCalls = Annotated[int, typer.Option(min=1, help="Cap on model calls.")]
TraceFile = Annotated[Path | None, typer.Option(help="Append the event trace (JSONL).")]
Quiet = Annotated[bool, typer.Option(help="No progress on stderr.")]
AsJson = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
Executor = Annotated[
    str,
    typer.Option(
        "--executor", help="local (this process) or ray (a Ray task on the fleet, docs/durable.md)."
    ),
]
RayAddress = Annotated[
    str | None,
    typer.Option("--ray-address", help="Join this Ray cluster ('auto', ray://host:10001)."),
]
PerEndpoint = Annotated[
    int | None,
    typer.Option("--per-endpoint", min=1, help="Ray: runs at once per model endpoint (default 4)."),
]
