"""The team's one-model-at-a-time lock file, taken by the benchmark scripts that hold it
themselves (program_bench.py, program_seeds.py), saying so when they must wait."""

from __future__ import annotations

import fcntl
import sys
from typing import IO


def take(path: str) -> IO[str]:
    """An exclusive lock on the file `path` (blocking), as its open handle. When another
    process holds it, say so on stderr first: a `flock PATH` wrapped around a script that
    takes the lock itself waits for ever, and it should not do so in silence."""
    handle = open(path, "a")  # noqa: SIM115 - held by the caller, closed when released
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(
            f"waiting for the model lock {path}: another process holds it (this script "
            "takes the lock itself; under `flock` on the same file, run it with --lock '')",
            file=sys.stderr,
            flush=True,
        )
        fcntl.flock(handle, fcntl.LOCK_EX)
    return handle


def release(handle: IO[str]) -> None:
    """Let the lock go and close its handle."""
    fcntl.flock(handle, fcntl.LOCK_UN)
    handle.close()
