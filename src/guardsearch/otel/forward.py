"""Spans made in a separate process: the run's own process only hands its events over.

Making a span and encoding it for OTLP costs the OpenTelemetry Python SDK tens of
microseconds, as much CPU as the search engine spends on a whole expansion, and in
one process it all holds the GIL the run needs. So when guardsearch sets up the
exporter itself (an OTLP endpoint in the environment, `--otel`), the spans are made in
an export process (otel/export_process.py) at a lower priority: this process appends
each event, with a token for the context (asyncio task, thread) that emitted it, to a
buffer that a thread writes to the export process in batches (otel/wire.py), and makes
only what must be known here: a run span's ids (recorded in the trace, for a resumed
run's links; continuing the caller's span) and the spans other instrumentation makes
with the global provider (an HTTP request's), which go over as finished spans.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import subprocess
import sys
import threading
import time
import warnings
import weakref
from asyncio import current_task
from asyncio.events import _get_running_loop
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.trace import SpanKind

from guardsearch.core.errors import ConfigError
from guardsearch.core.events import Event, Trace
from guardsearch.otel.wire import Record, frame, span_record

BATCH = 512  # records per frame
# The emitting context's (task, token): a new task copies its creator's, and so sees a
# mark whose task is not itself.
_mark: ContextVar[tuple[Any, int] | None] = ContextVar("guardsearch_otel_mark", default=None)
_keys = itertools.count(1)
_tokens = itertools.count(1)  # process-wide: a mark outlives a channel (tests make many)
_time_ns = time.time_ns

RunIdsRecord = tuple[int, int, int, tuple[int, int, bool, int] | None]


def _max_frames() -> int:
    """Frames allowed to wait for the export process: the SDK's queue setting
    (`OTEL_BSP_MAX_QUEUE_SIZE`, spans), counted as events, at least 64 frames."""
    try:
        spans = int(os.environ.get("OTEL_BSP_MAX_QUEUE_SIZE", "2048"))
    except ValueError:
        spans = 2048
    return max(64, 8 * spans // BATCH)


class Channel:
    """The export process, and the pipe to it: records buffered here, written in frames
    by a thread; flushes answered by the process (with its span count and CPU time)."""

    def __init__(self, *, spawn: bool = True, marker: str = "") -> None:
        """`marker`: an environment variable set in the process (so that it does not
        trace itself: `guardsearch.otel.EXPORTER_ENV`). `spawn=False`: no process; the
        frames stay queued for `take_frames` (tests replay them in their own process)."""
        self.process: subprocess.Popen[bytes] | None = None
        self._init_buffers()
        if spawn:
            if not marker:  # without it the process would start one of its own, and so on
                raise ValueError("the span export process needs its marker variable")
            self._spawn(marker)

    def _spawn(self, marker: str) -> None:
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])  # where `guardsearch` is
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        env[marker] = "1"
        command = [sys.executable, "-m", "guardsearch.otel.export_process"]
        try:
            self.process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
            )
        except OSError as exc:
            raise ConfigError(
                f"traces: could not start the span export process ({exc}); "
                "GUARDSEARCH_OTEL_IN_PROCESS=1 exports from this process instead"
            ) from None
        self._writer = threading.Thread(target=self._write, name="otel-forward", daemon=True)
        self._writer.start()
        threading.Thread(target=self._read, name="otel-acks", daemon=True).start()
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        """A forked child has no writer thread, and the export process is its parent's."""
        self._alive = False
        self._forked_child = True

    def _init_buffers(self) -> None:
        # Appended to from any thread without a lock: a send takes the first n records
        # (a copy, then a delete of that slice: each atomic), so a record appended in
        # between stays for the next frame; one sender at a time.
        self.buffer: list[Record] = []
        self._gone: list[Record] = []  # contexts that ended (appended by finalizers)
        self._sending = threading.Lock()
        self._frames: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._waiting = 0  # frames not yet written
        self._max_frames = _max_frames()
        self.dropped = 0
        self._flushes = itertools.count(1)
        self._acked = 0
        self.stats: dict[str, float] = {"spans": 0, "cpu_s": 0.0}
        self._answered = threading.Condition()
        self._alive = True
        self._closed = False
        self._forked_child = False

    def put(self, record: Record) -> None:
        buffer = self.buffer
        buffer.append(record)
        if len(buffer) >= BATCH:
            self.send()

    def new_token(self, task: Any, mark: tuple[Any, int] | None) -> tuple[Any, int]:
        """A token for the context emitting now, whose creator's mark is `mark`."""
        token = next(_tokens)
        self.put(("t", token, mark[1] if mark is not None else 0))
        new = (task, token)
        _mark.set(new)
        if task is not None:  # a finished task's context is dropped there too
            weakref.finalize(task, self._gone.append, ("x", token))
        return new

    def send(self, *, force: bool = False) -> None:
        """Hand what is buffered to the writer thread (`force`: even when it is behind)."""
        if not self._sending.acquire(blocking=force):
            return  # another thread is sending: the records go with its next frame
        try:
            self._send(force)
        finally:
            self._sending.release()

    def _send(self, force: bool) -> None:
        buffer = self.buffer
        n = len(buffer)
        records = buffer[:n]
        del buffer[:n]
        if self._gone:
            n = len(self._gone)
            records += self._gone[:n]
            del self._gone[:n]
        if not records or not self._alive:
            if records and self._forked_child:
                self._forked_child = False  # say it once
                warnings.warn(
                    "no spans from a process forked from a traced one (its span export "
                    "process is the parent's): start it with the spawn method",
                    RuntimeWarning,
                    stacklevel=3,
                )
            return
        if not force and self._waiting >= self._max_frames:
            self.dropped += len(records)
            if self.dropped == len(records):
                warnings.warn(
                    "the span export process is behind: events dropped "
                    "(OTEL_BSP_MAX_QUEUE_SIZE sets how many may wait)",
                    RuntimeWarning,
                    stacklevel=3,
                )
            return
        self._waiting += 1
        self._frames.put(frame(records))

    def take_frames(self) -> list[bytes]:
        """The frames queued (with no process: what it would have been sent)."""
        taken = []
        while True:
            try:
                data = self._frames.get_nowait()
            except queue.Empty:
                break
            if data is not None:
                taken.append(data)
        self._waiting = 0
        return taken

    def _write(self) -> None:
        assert self.process is not None
        out = self.process.stdin
        assert out is not None
        while (data := self._frames.get()) is not None:
            try:
                out.write(data)
                out.flush()
            except (OSError, ValueError):
                self._died()
                return
            self._waiting -= 1
        with contextlib.suppress(OSError):
            out.close()

    def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            parts = line.split()
            if len(parts) == 4 and parts[0] == b"ack":
                with self._answered:
                    self._acked = int(parts[1])
                    self.stats = {"spans": int(parts[2]), "cpu_s": float(parts[3])}
                    self._answered.notify_all()
        self._died()

    def _died(self) -> None:
        with self._answered:
            if self._alive and not self._closed:
                warnings.warn(
                    "the span export process ended: no more spans", RuntimeWarning, stacklevel=2
                )
            self._alive = False
            self._answered.notify_all()

    def force_flush(self, timeout_s: float = 30.0) -> bool:
        """Send everything and wait until the export process exported it."""
        number = next(self._flushes)
        self.buffer.append(("f", number))
        self.send(force=True)
        if self.process is None:
            return True
        deadline = time.monotonic() + timeout_s
        with self._answered:
            while self._acked < number and self._alive:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._answered.wait(left)
        return self._acked >= number

    def shutdown(self, timeout_s: float = 30.0) -> None:
        """Send what is left, close the pipe, and wait for the process to export it."""
        if self._closed:
            return
        self.send(force=True)
        self._closed = True
        if self.process is None:
            return
        self._frames.put(None)
        self._writer.join(timeout_s)
        try:
            self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Forwarder:
    """A Trace subscriber that sends each event, and where it was emitted, to the export
    process; it makes a run span's ids here (see the module doc)."""

    def __init__(self, channel: Channel, tracer: Any, trace: Trace) -> None:
        self._put = channel.put
        self._append = channel.buffer.append
        self._buffer = channel.buffer
        self._channel = channel
        self._sampler = tracer.sampler
        self._ids = tracer.id_generator
        self._trace = weakref.ref(trace)
        self._key = next(_keys)
        self._open_runs: set[Any] = set()  # kernel runs (phase events) still open
        self._off = False

    def __call__(self, event: Event) -> None:
        if self._off:
            return
        try:
            loop = _get_running_loop()
            task = current_task(loop) if loop is not None else None
            mark = _mark.get()
            if mark is None or mark[0] is not task:
                mark = self._channel.new_token(task, mark)
            kind = event.kind
            run = self._run_ids(event) if kind == "run_start" or kind == "phase" else None
            self._append(
                (self._key, mark[1], event.seq, kind, event.at, event.step, event.node,
                 event.data, _time_ns(), run)
            )  # fmt: skip
            if len(self._buffer) >= BATCH:
                self._channel.send()
            if run is not None:
                self._record(event, run)
        except Exception as exc:
            # Tracing must never break the run it watches: this view stops, and says so.
            self._off = True
            warnings.warn(
                f"no more spans for this run: forwarding a {event.kind} event failed "
                f"({type(exc).__name__}: {exc})",
                RuntimeWarning,
                stacklevel=2,
            )

    def close_all(self, why: str) -> None:
        """End the trace's open spans (it was dropped, or the process exits)."""
        if not self._off:
            self._off = True
            self._put(("c", self._key, why))

    def _run_ids(self, event: Event) -> RunIdsRecord | None:
        """The ids of the run span `event` opens (as SpanView decides), else None."""
        d = event.data
        if event.kind == "phase":
            run_id = d.get("run_id")
            if run_id is None:
                return None
            ending = d.get("phase") == "end"
            if run_id in self._open_runs:
                if ending:
                    self._open_runs.discard(run_id)
                return None
            if not ending:
                self._open_runs.add(run_id)
            family = event.step
        else:
            run_id, family = d.get("run_id", ""), "search"
        return self._make(family, str(run_id))

    def _make(self, family: str, run_id: str) -> RunIdsRecord:
        outer = trace_api.get_current_span()
        ctx = outer.get_span_context()
        trace_id = ctx.trace_id if ctx.is_valid else self._ids.generate_trace_id()
        name = f"invoke_workflow {family}"
        attrs = {"gen_ai.workflow.name": family, "guardsearch.run.id": run_id}
        decision = self._sampler.should_sample(
            otel_context.get_current(), trace_id, name, SpanKind.INTERNAL, attrs, ()
        )
        flags = 1 if decision.decision.is_sampled() else 0
        if outer.is_recording():  # the caller's span (an HTTP request) learns the run id
            outer.set_attribute("guardsearch.run.id", run_id)
        ids = (ctx.trace_id, ctx.span_id, ctx.is_remote, int(ctx.trace_flags))
        return (trace_id, self._ids.generate_span_id(), flags, ids if ctx.is_valid else None)

    def _record(self, event: Event, run: RunIdsRecord) -> None:
        """The run span's ids in the trace (what a resumed durable run links to)."""
        trace = self._trace()
        if trace is None:
            return
        d = event.data
        run_id = str(d.get("run_id", ""))
        ids = {"trace_id": f"{run[0]:032x}", "span_id": f"{run[1]:016x}"}
        trace.emit("note", run_id=run_id, span=ids)  # SPAN_KEY


class ForwardProcessor(SpanProcessor):
    """Sends the spans finished in this process (other instrumentation's, with the
    global provider) to the export process; flushing and shutting down go through."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel

    def on_end(self, span: ReadableSpan) -> None:
        if span.context is not None and span.context.trace_flags.sampled:
            self.channel.put(span_record(span))

    def shutdown(self) -> None:
        self.channel.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.channel.force_flush(timeout_millis / 1000)
