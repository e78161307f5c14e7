"""What the `bench` commands share: the `--store` option and the stale-trial notice."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from guardsearch.cli.output import err

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
