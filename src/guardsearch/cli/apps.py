"""`guardsearch apps` and `guardsearch runs start APP PROBLEM`: the registered apps, and a
durable run of any of them (or of an app named by import path)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from guardsearch.cli.output import fail, out, print_json
from guardsearch.cli.runs import (
    ExecutorOption,
    PerEndpointOption,
    RayAddressOption,
    executor_or_fail,
)
from guardsearch.core.errors import ConfigError
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
        uses = ["durable runs"] + ["POST /solve"] * row["served"] + ["bench"] * row["suite"]
        out.print(f"{row['name']:<8} {row['summary']}", markup=False, soft_wrap=True)
        out.print(
            f"{'':<8} strategy {row['strategy']}; {', '.join(uses)}; e.g. "
            f"guardsearch runs start {row['name']} '{json.dumps(row['example'])}'",
            markup=False,
            soft_wrap=True,
        )
        if row["command"]:
            out.print(f"{'':<8} or: {row['command']}", markup=False, soft_wrap=True)


def _json_object(text: str, what: str, as_json: bool) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        fail(f"{what} must be a JSON object: {exc}", as_json=as_json)
    if not isinstance(value, dict):
        fail(f"{what} must be a JSON object, got {text!r}", as_json=as_json)
    return value


def start(
    app: Annotated[
        str, typer.Argument(help="A registered app (guardsearch apps) or pkg.module:build.")
    ],
    problem: Annotated[
        str, typer.Argument(help='The problem as JSON, e.g. \'{"numbers": "4 5 6 10"}\'.')
    ],
    strategy: Annotated[
        str | None, typer.Option(help="Search strategy (default: the app's).")
    ] = None,
    options: Annotated[
        str | None, typer.Option(help="Strategy options as JSON, e.g. '{\"width\": 3}'.")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model spec (default: embedded).")] = None,
    budget_calls: Annotated[int, typer.Option(min=1, help="Cap on model calls.")] = 40,
    budget_tokens: Annotated[int | None, typer.Option(min=1, help="Cap on tokens.")] = None,
    seconds: Annotated[float | None, typer.Option(help="Wall-clock deadline.")] = None,
    store: Annotated[str | None, typer.Option(help="Run store (default $GUARDSEARCH_DB).")] = None,
    name: Annotated[str, typer.Option(help="A name for the run.")] = "",
    locked: Annotated[
        bool, typer.Option("--locked", help="Refuse unless the solver matches guardsearch.lock.")
    ] = False,
    quiet: Annotated[bool, typer.Option(help="No progress on stderr.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    per_endpoint: PerEndpointOption = None,
) -> None:
    """Start a durable run of an app on one problem; exits 0, 1, or 3 when paused."""
    from guardsearch.cli.durable_solve import solve_durably

    where = executor_or_fail(executor, ray_address, per_endpoint, as_json)

    try:
        chosen = strategy or get_app(app).strategy
    except ConfigError as exc:
        fail(str(exc), as_json=as_json)
    solve_durably(
        app=app,
        problem=_json_object(problem, "PROBLEM", as_json),
        strategy=chosen,
        model=model,
        budget={"calls": budget_calls, "tokens": budget_tokens, "seconds": seconds},
        options=_json_object(options, "--options", as_json) if options else {},
        store=store,
        name=name,
        locked=locked,
        quiet=quiet,
        as_json=as_json,
        executor=where,
    )
