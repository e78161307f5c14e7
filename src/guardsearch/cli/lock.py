"""`guardsearch lock RUN_ID`: freeze the solver of a succeeded run into guardsearch.lock."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from guardsearch.cli.durable_solve import open_or_fail
from guardsearch.cli.output import fail, out, print_json
from guardsearch.cli.runs import StoreOption, get_or_fail


def lock(
    run_id: Annotated[str, typer.Argument(help="A succeeded run whose solver to freeze.")],
    store: StoreOption = None,
    out_file: Annotated[Path, typer.Option("--out", help="Where to write the lock.")] = Path(
        "guardsearch.lock"
    ),
    as_json: Annotated[bool, typer.Option("--json", help="Print the lock as JSON.")] = False,
) -> None:
    """Write guardsearch.lock: prompt hashes, config, model spec + weights, version."""
    from guardsearch.runs.lock import write_lock

    record = get_or_fail(open_or_fail(store, as_json), run_id, as_json)
    if record.status != "succeeded":
        fail(
            f"run {run_id} is {record.status}; only a succeeded run's solver can be locked",
            as_json=as_json,
        )
    try:
        path = write_lock(record.fingerprint, out_file, run_id=run_id)
    except OSError as exc:
        fail(f"cannot write lock file {out_file}: {exc.strerror or exc}", as_json=as_json)
    if as_json:
        print_json({**record.fingerprint, "run": run_id, "path": str(path)})
    else:
        out.print(f"wrote {path} ({len(record.fingerprint['prompts'])} prompt templates)")
