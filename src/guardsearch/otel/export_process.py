"""The span export process: a run's events in on stdin, spans out over OTLP.

Started by otel/forward.py with the run's environment (so the `OTEL_*` settings are
the same), at a lower priority than the run. It replays each traced run's events into
a `SpanView`, each event in the context (`contextvars.Context`) of the task or thread
that emitted it, copied from its creator's as asyncio copies a task's, so the view
finds the same open span it would have found in the run's process. The spans go to
the SDK's batching processor and OTLP/HTTP exporter. It reads the frames as they come,
and replays them while the run's process is idle (otel/pacing.py says when). At the end
of its input (the run's process closed the pipe, or died) it ends what is still open
and exports everything.
"""

from __future__ import annotations

import collections
import contextlib
import os
import select
import signal
import sys
import time
from contextvars import Context
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from guardsearch.core.events import Event
from guardsearch.otel import pacing
from guardsearch.otel.recorder import Recorder
from guardsearch.otel.spans import RunIds, SpanView
from guardsearch.otel.wire import FrameReader, Record, readable_span

NICENESS = 19  # the lowest: exporting may lag behind a busy machine, the run should not
# Once its input ended and every event is replayed: how long the export may still take
# (the run's process waits as long at exit, unless detached: then this bounds a process
# left behind by a collector that does not answer).
EXIT_GRACE_S = 30


class Replay:
    """Turns records (otel/wire.py) into spans under `provider`."""

    def __init__(self, provider: Any, scope: str, version: str | None) -> None:
        tracer = provider.get_tracer(scope, version)
        self.recorder = Recorder(tracer, InstrumentationScope(scope, version))
        self.resource = tracer.resource
        self.views: dict[int, SpanView] = {}
        self.contexts: dict[int, Context] = {}

    def handle(self, record: Record) -> int | None:
        """Apply one record; a flush record's number is returned (else None)."""
        tag = record[0]
        if type(tag) is int:
            self._event(record)
        elif tag == "t":
            base = self.contexts.get(record[2])
            self.contexts[record[1]] = base.copy() if base is not None else Context()
        elif tag == "x":
            self.contexts.pop(record[1], None)
        elif tag == "c":
            view = self.views.pop(record[1], None)
            if view is not None:
                view.close_all(record[2])
        elif tag == "s":
            self.recorder.processor.on_end(readable_span(record, self.resource))
        elif tag == "f":
            return int(record[1])
        return None

    def _event(self, record: Record) -> None:
        key, token, seq, kind, at, step, node, data = record[:8]
        # when it was emitted: as sent, else its `at` (the trace's clock is the wall's)
        now, extra = record[8:] if len(record) > 8 else (None, None)
        view = self.views.get(key)
        if view is None:
            view = self.views[key] = SpanView(self.recorder, None)
        context = self.contexts.get(token)
        if context is None:
            context = self.contexts[token] = Context()
        view.preset = None
        if extra is not None and extra[0] == "run":
            view.preset = RunIds(*extra[1])  # the run span's ids, made (and recorded) there
        event = Event(seq=seq, kind=kind, at=at, step=step, node=node, data=data)
        context.run(view, event, now if now is not None else int(at * 1e9))
        view.preset = None

    def close_all(self, why: str) -> None:
        for view in self.views.values():
            view.close_all(why)
        self.views.clear()


class _Count(SpanProcessor):
    def __init__(self) -> None:
        self.spans = 0

    def on_end(self, span: ReadableSpan) -> None:
        self.spans += 1


def _queue_size() -> int:
    try:
        return max(2, int(os.environ.get("OTEL_BSP_MAX_QUEUE_SIZE", "2048")))
    except ValueError:
        return 2048


class Pump:
    """Reads the frames as they come and replays them when `otel/pacing.py` says: while
    the run's process is idle, or when they have waited long enough, take too much room,
    or a flush or the end of the input is behind them."""

    def __init__(
        self, replay: Replay, provider: Any, count: _Count, reader: FrameReader, watch: Any
    ) -> None:
        """`watch`: a `pacing.RunWatch` on the run's process (`busy()`, `restart()`)."""
        self.replay, self.provider, self.count = replay, provider, count
        self.reader, self.watch = reader, watch
        # (records, bytes, when it came, holds a flush), oldest first
        self.backlog: collections.deque[tuple[list[Record], int, float, bool]] = collections.deque()
        self.bytes = 0
        self.flushes = 0  # frames in the backlog that hold a flush
        self.max_wait, self.max_bytes = pacing.max_wait_s(), pacing.max_backlog_bytes()
        # The batching processor drops spans beyond its queue; here the events can wait
        # instead, so export (and wait for it) before the queue can fill.
        self.room, self.exported = _queue_size() // 2, 0

    def run(self) -> None:
        """Until the input ends and every frame is replayed."""
        while self.step():
            pass

    def step(self, wait_s: float | None = None) -> bool:
        """Replay the oldest frame if it is due, then read what came (waiting up to
        `wait_s` when nothing was due: default, until input comes, or a pacing look
        while frames wait). False once the input ended and every frame is replayed."""
        reader = self.reader
        if not self.backlog and reader.ended:
            return False
        timeout = wait_s
        if self.backlog and self._due():
            self._replay_one()
            timeout = 0.0
        elif self.backlog and timeout is None:
            timeout = pacing.WINDOW_S / 2
        if not reader.ended:
            readable, _, _ = select.select([reader.fd], [], [], timeout)
            if readable:
                reader.feed()
                self._arrive(reader.take())
        return True

    def _due(self) -> bool:
        if self.flushes or self.reader.ended or self.bytes >= self.max_bytes:
            return True
        if time.monotonic() - self.backlog[0][2] >= self.max_wait:
            return True
        return not self.watch.busy()

    def _arrive(self, frames: list[tuple[list[Record], int]]) -> None:
        now = time.monotonic()
        for records, size in frames:
            if not self.backlog:
                self.watch.restart()
            flush = any(record[0] == "f" for record in records)
            self.backlog.append((records, size, now, flush))
            self.bytes += size
            self.flushes += flush

    def _replay_one(self) -> None:
        records, size, _, flush = self.backlog.popleft()
        self.bytes -= size
        self.flushes -= flush
        for record in records:
            number = self.replay.handle(record)
            if number is not None:
                self.provider.force_flush()
                self.exported = self.count.spans
                cpu = time.process_time()
                sys.stdout.write(f"ack {number} {self.count.spans} {cpu:.6f}\n")
                sys.stdout.flush()
        if self.count.spans - self.exported >= self.room:
            self.provider.force_flush()
            self.exported = self.count.spans


def main() -> None:
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from guardsearch.otel.setup import SCOPE, _resource, _version

    provider = TracerProvider(resource=_resource(), shutdown_on_exit=False)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    count = _Count()
    provider.add_span_processor(count)
    replay = Replay(provider, SCOPE, _version())
    run_pid = int(sys.argv[1]) if len(sys.argv) > 1 else os.getppid()
    reader = FrameReader(sys.stdin.buffer.fileno())
    Pump(replay, provider, count, reader, pacing.RunWatch(run_pid)).run()
    if hasattr(signal, "alarm"):
        signal.alarm(EXIT_GRACE_S)  # the default action ends the process
    replay.close_all("process exit")
    provider.shutdown()


if __name__ == "__main__":
    main()
