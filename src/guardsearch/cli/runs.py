"""`guardsearch runs list|show|export|view|resume|cancel`: durable runs from the command line.

`runs start APP PROBLEM` starts one of any registered app (guardsearch/registry.py).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Annotated, Any, cast

import typer

from guardsearch.cli.durable_solve import (
    execute_elsewhere,
    executor_or_fail,
    open_or_fail,
    report,
)
from guardsearch.cli.live_status import live_status
from guardsearch.cli.options import Executor, PerEndpoint, RayAddress
from guardsearch.cli.output import err, exit_for, fail, out, print_json, progress_printer
from guardsearch.core.errors import ConfigError, GuardsearchError
from guardsearch.core.events import Trace
from guardsearch.registry import get_app
from guardsearch.store.base import STATUSES, RunRecord, RunStore
from guardsearch.viewer.export import iso, record_json

runs_app = typer.Typer(
    help="Durable runs: start, list, show, export, view, resume, cancel.", no_args_is_help=True
)

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store", help="Run store: a SQLite file or postgresql:// URL (default $GUARDSEARCH_DB)."
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


def get_or_fail(store: RunStore, run_id: str, as_json: bool = False) -> RunRecord:
    try:
        return store.get_run(run_id)
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)


@runs_app.command("list")
def list_runs(
    store: StoreOption = None,
    status: Annotated[str | None, typer.Option(help=f"Only runs {'|'.join(STATUSES)}.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="At most N runs, newest first.")] = None,
    as_json: JsonOption = False,
) -> None:
    """List runs, newest first."""
    if status is not None and status not in STATUSES:
        fail(f"unknown status {status!r}; one of {', '.join(STATUSES)}", as_json=as_json)
    the_store = open_or_fail(store, as_json, read_only=True)
    records = the_store.list_runs(status=status, limit=limit)
    if as_json:
        print_json([record_json(r) for r in records])
        return
    if not records:
        err.print(f"[dim]no runs in {the_store.url}[/dim]")
    for r in records:
        held = f"  on {r.owner}" if r.status == "running" and r.owner else ""
        out.print(
            f"{r.id}  {r.status:<9}  {r.app}/{r.strategy:<10}  {r.calls:>4} calls  "
            f"{iso(r.created_at)}  {r.name}{held}"
        )


@runs_app.command()
def show(
    run_id: Annotated[str, typer.Argument(help="The run id.")],
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """One run: status, spec, result, counters (a paused run shows its question)."""
    the_store = open_or_fail(store, as_json, read_only=True)
    record = get_or_fail(the_store, run_id, as_json)
    data = record_json(record, full=True)
    bill = [c["paid"] for c in the_store.calls(run_id)]
    data["paid_calls"] = sum(bill)  # payments: a request asked again counts twice
    data["paid_twice"] = sum(1 for paid in bill if paid > 1)
    data["events"] = len(the_store.events(run_id))
    if as_json:
        print_json(data)
        return
    for key in ("id", "name", "status", "app", "strategy", "termination", "question", "error"):
        if data.get(key):
            out.print(f"{key:<12} {data[key]}")
    again = f", {data['paid_twice']} asked again" if data["paid_twice"] else ""
    out.print(f"{'calls':<12} {record.calls} ({data['paid_calls']} paid, memoised{again})")
    out.print(f"{'tokens':<12} {record.tokens}")
    out.print(f"{'expansions':<12} {record.expansions} ({record.nodes} nodes)")
    out.print(f"{'sessions':<12} {record.sessions} ({record.checkpoints} checkpoints)")
    out.print(f"{'created':<12} {data['created_at']}")
    if record.result:
        out.print(f"{'answer':<12} {record.result.get('answer')}")
        for line in record.result.get("path", []):
            out.print(f"[dim]  {line}[/dim]")


def export_doc(store: RunStore, run_id: str) -> dict[str, Any]:
    """Everything the store holds about one run, as plain JSON data."""
    from guardsearch.viewer.export import export_doc as whole

    get_or_fail(store, run_id)  # an unknown id is a one-line error
    return whole(store, run_id)


# A run id as stores make them ("run-3f2a..."): one file-name-safe word. Page names are
# built from an id only after this check, so no id (from an argument or from inside an
# export file) can name a path elsewhere: "../../x", "/etc/x", NULs are refused.
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def checked_id(run_id: object, where: str) -> str:
    """`run_id` if it is a well-formed run id; else a usage error naming `where`."""
    if isinstance(run_id, str) and RUN_ID.fullmatch(run_id) and ".." not in run_id:
        return run_id
    fail(f"{where} {str(run_id)[:80]!r} is not a run id (letters, digits, '.', '-', '_')")


def write_text(path: Path, text: str, what: str) -> None:
    """Write `text` to `path`; a folder, a missing folder or no permission is a usage
    error with one clear line, not a traceback."""
    try:
        path.write_text(text, "utf-8")
    except OSError as exc:
        fail(f"cannot write {what} {path}: {exc.strerror or exc}")


def read_export(source: Path) -> dict[str, Any]:
    """A `runs export` file, checked to have an export's shape."""
    from guardsearch.viewer.page import check_export

    try:
        doc = json.loads(source.read_text("utf-8"))
        check_export(doc)
    except OSError as exc:
        fail(f"cannot read {source}: {exc.strerror or exc}")
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, ValueError) as exc:
        fail(f"{source} is not a run export: {exc}")
    return cast(dict[str, Any], doc)


@runs_app.command()
def view(
    run: Annotated[str, typer.Argument(help="A run id, or a file written by `runs export`.")],
    store: StoreOption = None,
    out_file: Annotated[
        Path | None, typer.Option("--out", help="The HTML file (default RUN_ID.html).")
    ] = None,
) -> None:
    """Write a run as one HTML page: the search tree, the winning path, every event."""
    from guardsearch.viewer import render_run

    source = Path(run) if "\0" not in run else None
    if source is not None and source.suffix == ".json" and source.is_file():
        doc = read_export(source)
        name = checked_id(doc["run"].get("id"), f"the run id in {source}") if not out_file else ""
    else:
        name = checked_id(run, "run")
        doc = export_doc(open_or_fail(store, read_only=True), name)
    try:
        page = render_run(doc)
    except (ValueError, TypeError, RecursionError) as exc:
        fail(f"{run} is not a run export: {exc}")
    target = out_file or Path(f"{name}.html")
    write_text(target, page, "the page")
    out.print(f"wrote {target} ({len(page):,} bytes)", markup=False)


@runs_app.command()
def export(
    run_id: Annotated[str, typer.Argument(help="The run id.")],
    store: StoreOption = None,
    out_file: Annotated[
        Path | None, typer.Option("--out", help="Write here instead of stdout.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Accepted for symmetry: export is always JSON.")
    ] = False,
) -> None:
    """Everything about a run as one JSON document: record, tree, events, paid calls."""
    del as_json  # export prints JSON either way
    doc = export_doc(open_or_fail(store, read_only=True), run_id)
    if out_file is None:
        print_json(doc)
    else:
        write_text(out_file, json.dumps(doc, ensure_ascii=False, indent=2), "the export")
        err.print(f"wrote {out_file}", style="dim", markup=False)


@runs_app.command()
def resume(
    run_id: Annotated[str, typer.Argument(help="The run id.")],
    input_text: Annotated[
        str | None, typer.Option("--input", help="Answer to a paused run's question.")
    ] = None,
    store: StoreOption = None,
    budget_calls: Annotated[
        int | None, typer.Option(min=1, help="Raise the call limit (a run that ran out).")
    ] = None,
    budget_tokens: Annotated[int | None, typer.Option(min=1, help="Raise the token limit.")] = None,
    locked: Annotated[
        bool, typer.Option("--locked", help="Refuse unless the solver matches the lock file.")
    ] = False,
    lock_file: Annotated[Path, typer.Option(help="The lock file for --locked.")] = Path(
        "guardsearch.lock"
    ),
    quiet: Annotated[bool, typer.Option(help="No progress on stderr.")] = False,
    as_json: JsonOption = False,
    executor: Executor = "local",
    ray_address: RayAddress = None,
    per_endpoint: PerEndpoint = None,
) -> None:
    """Continue a run from its last saved frontier (after a crash, a pause or a budget)."""
    from guardsearch.runs.runner import execute_run

    where = executor_or_fail(executor, ray_address, per_endpoint, as_json)
    budget = {"calls": budget_calls, "tokens": budget_tokens}
    raised = {k: v for k, v in budget.items() if v is not None} or None
    if where.name != "local":
        if locked:
            fail("--locked checks the solver here; use it with --executor local", as_json=as_json)
        try:
            record = execute_elsewhere(
                where, store, run_id, human_input=input_text, budget=raised, quiet=quiet
            )
        except GuardsearchError as exc:
            fail(str(exc), exit_for(exc), as_json=as_json)
        report(record, as_json=as_json, quiet=quiet)
    the_store = open_or_fail(store, as_json)
    events = Trace()
    events.subscribe(progress_printer(quiet))
    try:
        with live_status(events, f"resume {run_id}", quiet=quiet, as_json=as_json):
            record = asyncio.run(
                execute_run(
                    run_id,
                    the_store,
                    human_input=input_text,
                    budget=raised,
                    locked=lock_file if locked else None,
                    trace=events,
                )
            )
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)
    report(record, as_json=as_json, quiet=quiet)


@runs_app.command()
def cancel(
    run_id: Annotated[str, typer.Argument(help="The run id.")],
    store: StoreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Cancel a run: at once if it is not running, else at the live run's next checkpoint."""
    the_store = open_or_fail(store, as_json)
    try:
        record = the_store.cancel(run_id)
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)
    if as_json:
        print_json(record_json(record))
    elif record.status == "cancelled":
        out.print(f"{record.id} cancelled")
    else:
        out.print(
            f"{record.id} cancel requested: process {record.owner} stops it at its next checkpoint"
        )


def _json_object(text: str, what: str, as_json: bool) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        fail(f"{what} must be a JSON object: {exc}", as_json=as_json)
    if not isinstance(value, dict):
        fail(f"{what} must be a JSON object, got {text!r}", as_json=as_json)
    return value


@runs_app.command()
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
    executor: Executor = "local",
    ray_address: RayAddress = None,
    per_endpoint: PerEndpoint = None,
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
