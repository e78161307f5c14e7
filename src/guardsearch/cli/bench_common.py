"""What the `bench` commands share: the `--store` option, the stale-trial notice, and
running an experiment's trials with progress on stderr (a line per trial, and on a
terminal a bar per method with elapsed time and ETA)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

from guardsearch.cli.live_status import BenchProgress, bench_progress
from guardsearch.cli.output import err, exit_for, fail
from guardsearch.core.errors import GuardsearchError

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Also record each finished trial as a run in this run store "
        "(SQLite path or postgresql:// URL; default: off).",
    ),
]


def open_run_store(url: str | None) -> Any:
    """The run store at `url`, or None when `--store` is not given."""
    if url is None:
        return None
    from guardsearch.store import open_store

    return open_store(url)


def warn_stale(runner: Any, quiet: bool) -> None:
    """Say which stored trials ran with another config and therefore run again."""
    if quiet:
        return
    for s in runner.stale():
        err.print(
            f"[yellow]{s['method']}: {s['trials']} stored trial(s) ran with another "
            f"config ({s['changed']}); they run again[/yellow]"
        )


def run_trials(
    config: Any,
    *,
    store_url: str | None,
    quiet: bool,
    as_json: bool,
    executor: Callable[[], Any] | None = None,
    report: Callable[[Any, dict[str, Any]], Any] | None = None,
) -> Any:
    """Run the experiment's pending trials, a line per finished trial on stderr (unless
    `quiet`), each also recorded in the run store at `store_url` when given. Returns the
    scorecard, or what `report(runner, scorecard)` makes of it; an error ends the command
    (exit code by its kind). `executor` makes the executor (default: local)."""
    from guardsearch.experiments import ExperimentRunner

    bars: list[BenchProgress] = []  # on a terminal: a bar per method (cli/live_status.py)

    def progress(result: Any, done: int, total: int) -> None:
        if not quiet:
            mark = "solved" if result.succeeded else result.termination
            err.print(
                f"[dim][{done}/{total}] {result.method} {result.problem}: {mark}, "
                f"{result.calls} calls, {result.seconds:.1f}s[/dim]"
            )
        for bar in bars:
            bar.finished(str(result.method))

    run_store = None
    try:
        run_store = open_run_store(store_url)
        runner = ExperimentRunner(
            config,
            executor=executor() if executor is not None else None,
            progress=progress,
            run_store=run_store,
        )
        warn_stale(runner, quiet)
        if not quiet:
            err.print(
                f"[dim]{len(runner.pending())} of {len(runner.plan())} trials to run "
                f"-> {config.out_dir}[/dim]"
            )
        methods = [spec.method.label for spec in runner.pending()]
        with bench_progress(methods, quiet=quiet, as_json=as_json) as shown:
            bars.extend([shown] if shown is not None else [])
            card = runner.run()
        return report(runner, card) if report is not None else card
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)
    finally:
        if run_store is not None:
            run_store.close()
