"""Store faults: waiting out a locked, full, read-only or unreachable store, then a StoreError.

Every store operation runs through `retrying`: a driver error the backend calls
transient (a lock held by another writer, a full disk, a read-only file, a lost
connection) is retried with backoff for up to `wait` seconds
(`$GUARDSEARCH_STORE_WAIT`, default 120); after that, or at once for a permanent fault
(a damaged or foreign file, an SQL error), it is raised as a `StoreError` naming the
store. Once a store has failed after waiting the whole window it is *out*: later
operations try once instead of waiting again, until one succeeds (or `renew` is
called). So a run that meets a store that is gone for good stops after one window
(and one more to record its stop), not one window per write.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from guardsearch.core.errors import ConfigError, StoreError

WAIT_ENV = "GUARDSEARCH_STORE_WAIT"
DEFAULT_WAIT = 120.0
FIRST_DELAY = 0.05
MAX_DELAY = 2.0

log = logging.getLogger("guardsearch.store")

T = TypeVar("T")


def store_wait() -> float:
    """How long an operation waits for the store to come back (`$GUARDSEARCH_STORE_WAIT`)."""
    raw = os.environ.get(WAIT_ENV)
    if not raw:
        return DEFAULT_WAIT
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{WAIT_ENV} must be a number of seconds, got {raw!r}") from None
    if not 0 <= value <= 86_400:
        raise ConfigError(f"{WAIT_ENV} must be between 0 and 86400 seconds, got {raw!r}")
    return value


@dataclass(frozen=True)
class Fault:
    """What a driver error means: its message (safe to show) and whether waiting may help."""

    detail: str
    transient: bool


@dataclass
class FaultPolicy:
    """How one store meets faults: the backend's `classify` (None: not a driver error,
    let it through) and `recover` (e.g. reconnect), the window, and whether the store
    is out (failed after a whole window; then one attempt per operation).

    With `chain=False` the StoreError does not carry the driver's exception (psycopg's
    keeps the connection, password included, in its attributes).
    """

    url: str
    classify: Callable[[BaseException], Fault | None]
    recover: Callable[[], None]
    wait: float
    chain: bool = True
    out: bool = False

    def renew(self) -> None:
        """Let the next operation wait a whole window again, even if the store is out (a
        run that stopped waits once more to record its answers and its stop)."""
        self.out = False

    def run(self, operation: Callable[[], T]) -> T:
        """`operation()`, retried on transient faults; a StoreError when it cannot be done."""
        window = 0.0 if self.out else self.wait
        started = time.monotonic()
        delay = FIRST_DELAY
        warned = False
        while True:
            try:
                result = operation()
            except Exception as exc:
                fault = self.classify(exc)
                if fault is None:
                    raise
                waited = time.monotonic() - started
                if not (fault.transient and waited + delay <= window):
                    cause = exc if self.chain else None
                    break
                if not warned:
                    log.warning(
                        "run store %s: %s; retrying for up to %.0f s",
                        self.url,
                        fault.detail,
                        window,
                    )
                    warned = True
                time.sleep(delay)
                delay = min(delay * 2, MAX_DELAY)
                self.recover()
                continue
            self.out = False
            return result
        # Raised outside the handler, so that without `chain` no driver error rides along.
        if fault.transient:
            self.out = True
        note = f" (gave up after {waited:.0f} s)" if fault.transient and window else ""
        raise StoreError(self.url, fault.detail + note, transient=fault.transient) from cause
