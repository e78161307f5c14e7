"""The span export process: a run's events in on stdin, spans out over OTLP.

Started by otel/forward.py with the run's environment (so the `OTEL_*` settings are
the same), at a lower priority than the run. It replays each traced run's events into
a `SpanView`, each event in the context (`contextvars.Context`) of the task or thread
that emitted it, copied from its creator's as asyncio copies a task's, so the view
finds the same open span it would have found in the run's process. The spans go to
the SDK's batching processor and OTLP/HTTP exporter. At the end of its input (the run's
process closed the pipe, or died) it ends what is still open and exports everything.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from contextvars import Context
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from guardsearch.core.events import Event
from guardsearch.otel.recorder import Recorder
from guardsearch.otel.spans import RunIds, SpanView
from guardsearch.otel.wire import Record, frames, readable_span

NICENESS = 19  # the lowest: exporting may lag behind a busy machine, the run should not


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
        key, token, seq, kind, at, step, node, data, now, extra = record
        view = self.views.get(key)
        if view is None:
            view = self.views[key] = SpanView(self.recorder, None)
        context = self.contexts.get(token)
        if context is None:
            context = self.contexts[token] = Context()
        view.preset = None
        if extra is not None:
            what, value = extra
            if what == "run":  # the run span's ids, made (and recorded) by the run
                view.preset = RunIds(*value)
            elif what == "budget":  # its reservation's figures (otel/forward.py)
                view.reserve(data.get("reservation"), value)
        event = Event(seq=seq, kind=kind, at=at, step=step, node=node, data=data)
        context.run(view, event, now)
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
    # The batching processor drops spans beyond its queue; here the pipe can wait
    # instead, so export (and wait for it) before the queue can fill.
    room, exported = _queue_size() // 2, 0
    for records in frames(sys.stdin.buffer):
        for record in records:
            number = replay.handle(record)
            if number is not None:
                provider.force_flush()
                exported = count.spans
                sys.stdout.write(f"ack {number} {count.spans} {time.process_time():.6f}\n")
                sys.stdout.flush()
        if count.spans - exported >= room:
            provider.force_flush()
            exported = count.spans
    replay.close_all("process exit")
    provider.shutdown()


if __name__ == "__main__":
    main()
