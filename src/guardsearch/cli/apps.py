"""`guardsearch apps`: the registered apps, what `solve`, durable runs, POST /solve and
bench can run by name."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from guardsearch.cli.output import out, print_json
from guardsearch.registry import App, app_names, get_app


def _row(app: App) -> dict[str, Any]:
    return {
        "name": app.name,
        "summary": app.summary,
        "strategy": app.strategy,
        "example": app.example,
        "suite": app.suite is not None,
        "served": app.served,
        "command": app.command,
    }


def apps(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List the registered apps: what durable runs, POST /solve and bench can run by name."""
    rows = [_row(get_app(name)) for name in app_names()]
    if as_json:
        print_json({"apps": rows})
        return
    for row in rows:
        uses = ["solve", "durable runs"] + ["POST /solve"] * row["served"]
        uses += ["bench"] * row["suite"]
        out.print(f"{row['name']:<8} {row['summary']}", markup=False, soft_wrap=True)
        out.print(
            f"{'':<8} strategy {row['strategy']}; {', '.join(uses)}; e.g. "
            f"guardsearch solve {row['name']} '{json.dumps(row['example'])}'",
            markup=False,
            soft_wrap=True,
        )
        if row["command"]:
            out.print(f"{'':<8} or: {row['command']}", markup=False, soft_wrap=True)
