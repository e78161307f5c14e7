"""`solve ... --durable`: start a packaged problem as a durable run and report it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from guardsearch.cli.live_status import live_status
from guardsearch.cli.output import err, exit_for, fail, progress_printer
from guardsearch.cli.runs import execute_elsewhere, open_or_fail, report
from guardsearch.core.errors import GuardsearchError
from guardsearch.core.events import Trace
from guardsearch.models.spec import default_spec

if TYPE_CHECKING:
    from guardsearch.runs.fleet import RunExecutor

LOCK_FILE = Path("guardsearch.lock")


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
