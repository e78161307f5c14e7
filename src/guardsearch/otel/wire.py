"""What the run's process sends its export process (otel/forward.py -> export_process.py).

A frame is a 4-byte big-endian length and a `marshal`ed list of records (marshal: the
cheapest encoding of plain Python values, about 0.5 µs an event, and both ends are the
same Python). A record is a tuple:

- an event: `(trace key, context token, seq, kind, at, step, node, data)`, the first
  item an int; emitted at `at` (the trace's clock is the wall clock). The events that
  open or end a run, and every event of a trace on a clock of its own, add
  `(emitted ns or None, extra)`: extra is `("run", run ids)` for an event that opens a
  run span, else None;
- `("t", token, parent token)`: a new context (an asyncio task, a thread), copied from
  its parent's (0: none);
- `("x", token)`: that context is gone;
- `("c", trace key, why)`: the trace was dropped (or the process exits): end its spans;
- `("s", ...)`: a span the SDK made in the run's process (a request's span), finished;
- `("f", number)`: flush: export everything so far, then answer `ack number`.
"""

from __future__ import annotations

import json
import marshal
import os
import struct
from collections.abc import Iterator
from typing import IO, Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event as SpanEvent
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

HEADER = struct.Struct(">I")
Record = tuple[Any, ...]


def frame(records: list[Record]) -> bytes:
    """`records` as one frame; values marshal cannot write become JSON-plain first."""
    try:
        body = marshal.dumps(records)
    except ValueError:
        body = marshal.dumps([_plain_record(r) for r in records])
    return HEADER.pack(len(body)) + body


def _plain_record(record: Record) -> Record:
    try:
        marshal.dumps(record)
        return record
    except ValueError:
        # json with default=str: what the trace JSONL would have written for the values.
        return tuple(json.loads(json.dumps(v, default=str)) for v in record)


def frames(stream: IO[bytes]) -> Iterator[list[Record]]:
    """The record lists of the frames on `stream`, until it ends."""
    while True:
        header = stream.read(HEADER.size)
        if len(header) < HEADER.size:
            return
        (size,) = HEADER.unpack(header)
        body = stream.read(size)
        if len(body) < size:
            return
        records: list[Record] = marshal.loads(body)
        yield records


class FrameReader:
    """Frames from a file descriptor, read as they come without blocking: `feed` takes
    what the pipe holds, `take` the record lists of the frames complete so far."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.ended = False
        self._data = bytearray()
        self._ready: list[tuple[list[Record], int]] = []

    def feed(self) -> None:
        """Read what is there (call when `select` says so); at the end, `ended`."""
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            self.ended = True
            return
        data = self._data
        data += chunk
        start = 0
        while len(data) - start >= HEADER.size:
            (size,) = HEADER.unpack_from(data, start)
            end = start + HEADER.size + size
            if end > len(data):
                break
            self._ready.append((marshal.loads(data[start + HEADER.size : end]), size))
            start = end
        del data[:start]

    def take(self) -> list[tuple[list[Record], int]]:
        """The complete frames read since the last take: (records, bytes) each."""
        ready, self._ready = self._ready, []
        return ready


def _context(ctx: SpanContext | None) -> tuple[int, int, bool, int] | None:
    if ctx is None:
        return None
    return (ctx.trace_id, ctx.span_id, ctx.is_remote, int(ctx.trace_flags))


def _span_context(ids: tuple[int, int, bool, int] | None) -> SpanContext | None:
    if ids is None:
        return None
    trace_id, span_id, remote, flags = ids
    return SpanContext(trace_id, span_id, remote, TraceFlags(flags))


def span_record(span: ReadableSpan) -> Record:
    """An SDK span the run's process finished, as an `s` record."""
    scope = span.instrumentation_scope
    return (
        "s",
        span.name,
        _context(span.context),
        _context(span.parent),
        span.kind.value,
        dict(span.attributes or {}),
        [(e.name, dict(e.attributes or {}), e.timestamp) for e in span.events],
        [(_context(lk.context), dict(lk.attributes or {})) for lk in span.links],
        (span.status.status_code.value, span.status.description),
        span.start_time,
        span.end_time,
        (scope.name, scope.version) if scope is not None else ("", None),
    )


def readable_span(record: Record, resource: Resource) -> ReadableSpan:
    """An `s` record as the span it was, for the export process's processors."""
    _, name, context, parent, kind, attrs, events, links, status, start, end, scope = record
    code, description = status
    return ReadableSpan(
        name=name,
        context=_span_context(context),
        parent=_span_context(parent),
        resource=resource,
        attributes=attrs,
        events=[SpanEvent(n, a, t) for n, a, t in events],
        links=[Link(_span_context(c), a) for c, a in links],  # type: ignore[arg-type]
        kind=SpanKind(kind),
        status=Status(StatusCode(code), description),
        start_time=start,
        end_time=end,
        instrumentation_scope=InstrumentationScope(scope[0], scope[1]),
    )
