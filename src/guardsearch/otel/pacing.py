"""When the span export process works: while the run's process leaves the CPU alone.

Making spans costs the export process (otel/export_process.py) more CPU than the
events cost the run that emits them, and on a machine with few cores a busy process
next to the run slows it even when it runs on another core at the lowest priority
(shared caches, a hypervisor's sibling threads): on the 2-core machine of
benchmarks/results/otel_overhead.md a busy loop at nice 19 slows the search engine by
20-40 %. So the export process reads every event as it comes (cheap: the pipe never
fills) but makes the spans while the run's process is idle (waiting for a model, a
request, a flush), and only holds back so long:

- at most `OTEL_BSP_SCHEDULE_DELAY` (the SDK's own batching delay, 5 s by default)
  for the oldest waiting event;
- at most as many bytes as `OTEL_BSP_MAX_QUEUE_SIZE` lets wait (as otel/forward.py
  counts them: 8 events of 160 bytes a span, at least 4 MiB);
- never past a flush (`force_flush`, the run's exit) or the end of its input.

"Idle" is read from `/proc/<pid>/stat` (the CPU time of every thread of the run's
process): below half a core over the last tenth of a second. Where there is no
`/proc` (macOS, Windows) the run always counts as idle: spans are made as events come.
"""

from __future__ import annotations

import os
import time

WINDOW_S = 0.1  # the run's CPU share is measured over at least this long
BUSY_SHARE = 0.5  # of one core: above it the run is busy


def max_wait_s() -> float:
    """How long the oldest event may wait: `OTEL_BSP_SCHEDULE_DELAY` (ms), default 5 s."""
    try:
        return max(0.0, float(os.environ.get("OTEL_BSP_SCHEDULE_DELAY", "5000")) / 1000)
    except ValueError:
        return 5.0


def max_backlog_bytes() -> int:
    """Bytes of events allowed to wait: the SDK's queue setting (`OTEL_BSP_MAX_QUEUE_SIZE`,
    spans), as about eight events of 160 bytes a span, and at least 4 MiB."""
    try:
        spans = int(os.environ.get("OTEL_BSP_MAX_QUEUE_SIZE", "2048"))
    except ValueError:
        spans = 2048
    return max(4 << 20, spans * 8 * 160)


class RunWatch:
    """Is the run's process busy? Its CPU time (all threads) against the clock."""

    def __init__(self, pid: int) -> None:
        self._path = f"/proc/{pid}/stat"
        self._tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.restart()

    def restart(self) -> None:
        """Measure afresh from now (events are waiting again), busy until measured: a
        window that began before they came would average a burst away."""
        self._then = time.monotonic()
        self._cpu = self._cpu_s()
        self._busy = self._cpu is not None

    def _cpu_s(self) -> float | None:
        """The run's user + system CPU seconds (None: unknown, or the process is gone)."""
        try:
            with open(self._path, "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            return None
        # After the command's ")": state is field 3 of proc(5), utime 14 and stime 15.
        return (int(fields[11]) + int(fields[12])) / self._tick

    def busy(self) -> bool:
        """Was the run using more than half a core since the last look (at least
        WINDOW_S ago; a look sooner repeats the last answer)?"""
        now = time.monotonic()
        if now - self._then < WINDOW_S:
            return self._busy
        cpu = self._cpu_s()
        if cpu is None or self._cpu is None:
            self._busy = False
        else:
            self._busy = cpu - self._cpu > BUSY_SHARE * (now - self._then)
        self._then, self._cpu = now, cpu
        return self._busy
