"""`solve ... --durable` and `runs start`: a problem as a durable run, and its report.

Also what every `runs` command shares: the store opened (or a one-line error) and a
finished run printed with its exit code.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from guardsearch.cli.live_status import live_status
from guardsearch.cli.output import err, exit_for, fail, out, print_json, progress_printer
from guardsearch.core.errors import GuardsearchError
from guardsearch.core.events import Trace
from guardsearch.models.spec import default_spec
from guardsearch.store.base import RunRecord, RunStore
from guardsearch.viewer.export import record_json

if TYPE_CHECKING:
    from guardsearch.runs.fleet import RunExecutor

LOCK_FILE = Path("guardsearch.lock")
EXIT_PAUSED = 3


def open_or_fail(url: str | None, as_json: bool = False, *, read_only: bool = False) -> RunStore:
    """The run store, or a one-line error; `read_only` for commands that only read
    (they never wait for the write lock)."""
    from guardsearch.store.open import open_store

    try:
        return open_store(url, read_only=read_only)
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)


def report(record: RunRecord, *, as_json: bool, quiet: bool) -> None:
    """Print a finished (or paused) run and exit with its code: 0, 1, or 3 when paused."""
    if as_json:
        print_json(record_json(record, full=True))
    elif record.status == "paused":
        out.print(f"paused: {record.question}")
        err.print(f"resume with: guardsearch runs resume {record.id} --input TEXT")
    elif record.result is not None and record.result.get("succeeded"):
        out.print(str(record.result.get("answer")))
    else:
        err.print(f"[red]run {record.status}:[/red] {record.termination or record.error}")
    if not quiet and not as_json:
        err.print(f"[dim]run {record.id}: {record.status}, {record.calls} calls[/dim]")
    code = {"succeeded": 0, "paused": EXIT_PAUSED}.get(record.status, 1)
    raise typer.Exit(code)


def executor_or_fail(
    name: str, address: str | None, per_endpoint: int | None, as_json: bool = False
) -> RunExecutor:
    """The run executor `--executor` names, or a one-line usage error."""
    from guardsearch.runs.fleet import run_executor

    try:
        return run_executor(name, address=address, per_endpoint=per_endpoint)
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)


def execute_elsewhere(
    executor: RunExecutor,
    store: str | None,
    run_id: str,
    *,
    human_input: str | None = None,
    budget: dict[str, Any] | None = None,
    quiet: bool = False,
) -> RunRecord:
    """Run `run_id` on a non-local executor (its progress stays with the worker)."""
    from guardsearch.store.open import default_store_url

    if not quiet:
        err.print(f"[dim]run {run_id}: queued on the {executor.name} executor[/dim]")
    return executor.execute(
        store or default_store_url(), run_id, human_input=human_input, budget=budget
    )


def solve_durably(
    *,
    app: str,
    problem: dict[str, Any],
    strategy: str,
    model: str | None,
    budget: dict[str, Any],
    options: dict[str, Any],
    store: str | None,
    name: str,
    locked: bool,
    quiet: bool,
    as_json: bool,
    executor: RunExecutor | None = None,
) -> None:
    """Create the run, execute it, print it; exits 0 / 1 / 3 (paused) like `runs resume`."""
    from guardsearch.runs import RunSpec, create_run, execute_run

    the_store = open_or_fail(store, as_json)
    events = Trace()
    events.subscribe(progress_printer(quiet))
    try:
        spec = RunSpec(
            app=app,
            problem=problem,
            strategy=strategy,
            options=options,
            model=model or default_spec(),
            budget={k: v for k, v in budget.items() if v is not None},
            name=name,
        )
        record = create_run(spec, the_store, locked=LOCK_FILE if locked else None)
        if not quiet:
            err.print(f"[dim]run {record.id} in {the_store.url}[/dim]")
        if executor is not None and executor.name != "local":
            the_store.close()  # the run is the fleet's now
            record = execute_elsewhere(executor, store, record.id, quiet=quiet)
            report(record, as_json=as_json, quiet=quiet)
        title = f"run {record.id} · {app} / {strategy}"
        with live_status(events, title, budget=spec.make_budget(), quiet=quiet, as_json=as_json):
            record = asyncio.run(execute_run(record.id, the_store, trace=events))
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)
    report(record, as_json=as_json, quiet=quiet)
