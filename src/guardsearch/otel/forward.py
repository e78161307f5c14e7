"""Spans made in a separate process: the run's own process only hands its events over.

Making a span and encoding it for OTLP costs the OpenTelemetry Python SDK tens of
microseconds, as much CPU as the search engine spends on a whole expansion, and in
one process it all holds the GIL the run needs. So when guardsearch sets up the
exporter itself (an OTLP endpoint in the environment, `--otel`), the spans are made in
an export process (otel/export_process.py) at the lowest priority: this process
appends each event, with a token for the context (asyncio task, thread) that emitted it,
to a buffer written to the export process in batches (otel/wire.py) without blocking,
and makes only what must be known here: a run span's ids (recorded in the trace, for a
resumed run's links; continuing the caller's span) and the spans other instrumentation
makes with the global provider (an HTTP request's), which go over as finished spans.

What the run still pays (benchmarks/results/otel_overhead.md): 1.5-3 µs an event, about
+10-13 % on the zero-latency engine benchmark, against +150-220 % with the spans made in
this process.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import os
import select
import subprocess
import sys
import threading
import time
import warnings
import weakref
from asyncio import current_task
from asyncio.events import _get_running_loop
from collections.abc import Callable
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
# The buffer is flat, three items a record: (event, trace key << 32 | context token, the
# emitted ns, or (ns, ("run", run ids)) for a run-opening event, (ns, ("budget", figures))
# for a model call), or (record, None, None) for any other record. No container made per
# event outlives the emit: the garbage collector would keep going through thousands of
# them, and it costs more than the forwarding itself.
WIDTH = 3
TOKEN_BITS = 32
TOKEN_MASK = (1 << TOKEN_BITS) - 1
# The emitting context's (task, token): a new task copies its creator's, and so sees a
# mark whose task is not itself.
_mark: ContextVar[tuple[Any, int] | None] = ContextVar("guardsearch_otel_mark", default=None)
_keys = itertools.count(1)
_tokens = itertools.count(1)  # process-wide: a mark outlives a channel (tests make many)
_time_ns = time.time_ns

RunIdsRecord = tuple[int, int, int, tuple[int, int, bool, int] | None]
# Events the subscriber does more with than send (Forwarder._special).
_SPECIAL = frozenset(
    (
        "run_start",
        "run_end",
        "phase",
        "budget_reserve",
        "budget_reconcile",
        "model_call",
        "model_error",
    )
)


def _max_pending() -> int:
    """Bytes allowed to wait for the export process: the SDK's queue setting
    (`OTEL_BSP_MAX_QUEUE_SIZE`, spans), as about eight events of 160 bytes a span, and at
    least 4 MiB."""
    try:
        spans = int(os.environ.get("OTEL_BSP_MAX_QUEUE_SIZE", "2048"))
    except ValueError:
        spans = 2048
    return max(4 << 20, spans * 8 * 160)


class Channel:
    """The export process, and the pipe to it: records buffered here and written in
    frames without blocking (by the thread whose record fills a frame, or a ticker thread
    once a second); flushes answered by the process (with its span count and CPU time).

    No thread blocks on the pipe: a writer thread woken each time the export process
    reads would take the interpreter's lock from the run, which on a busy machine then
    waits for that thread to be scheduled. What the pipe cannot take yet waits here
    (as much as `_max_pending` allows, then it is dropped, with one warning).
    """

    def __init__(self, *, spawn: bool = True, marker: str = "") -> None:
        """`marker`: an environment variable set in the process (so that it does not
        trace itself: `guardsearch.otel.EXPORTER_ENV`). `spawn=False`: no process; the
        frames stay here for `take_frames` (tests replay them in their own process)."""
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
        assert self.process.stdin is not None
        self._fd = self.process.stdin.fileno()
        os.set_blocking(self._fd, False)
        with contextlib.suppress(ImportError, AttributeError, OSError):
            import fcntl  # Linux: a larger pipe, fewer frames waiting here

            fcntl.fcntl(self._fd, fcntl.F_SETPIPE_SZ, 1 << 20)
        threading.Thread(target=self._tick, name="otel-forward", daemon=True).start()
        threading.Thread(target=self._read, name="otel-acks", daemon=True).start()
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        """A forked child has no ticker thread, and the export process is its parent's."""
        self._alive = False
        self._say = (
            "no spans from a process forked from a traced one (its span export process "
            "is the parent's): start it with the spawn method"
        )

    def _init_buffers(self) -> None:
        # Extended from any thread without a lock, a record at a time: a send takes the
        # first n items (a copy, then a delete of that slice: each atomic), so a record
        # added in between stays for the next frame; one sender at a time.
        self.buffer: list[Any] = []
        self._gone: list[Record] = []  # contexts that ended (appended by finalizers)
        self._sending = threading.Lock()
        self._pending: collections.deque[memoryview] = collections.deque()
        self._pending_bytes = 0
        self._max_pending = _max_pending()
        self._kept: list[bytes] = []  # with no process: the frames, for take_frames
        self.dropped = 0
        self._flushes = itertools.count(1)
        self._acked = 0
        self.stats: dict[str, float] = {"spans": 0, "cpu_s": 0.0}
        self._answered = threading.Condition()
        self._stopped = threading.Event()
        self._alive = True
        self._closed = False
        self._say = ""  # why no more spans go out, for the next sender to warn once

    def put(self, record: Record) -> None:
        buffer = self.buffer
        buffer.extend((record, None, None))
        if len(buffer) >= BATCH * WIDTH:
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
        """Frame what is buffered and write what the pipe takes (`force`: wait for the
        sender of the moment, and keep the frame even when the process is behind)."""
        if not self._sending.acquire(blocking=force):
            return  # another thread is sending: the records go with its next frame
        try:
            self._send(force)
            self._drain()
        finally:
            self._sending.release()

    def _send(self, force: bool) -> None:
        buffer = self.buffer
        n = len(buffer)
        records = _records(buffer[:n])
        del buffer[:n]
        if self._gone:
            n = len(self._gone)
            records += self._gone[:n]
            del self._gone[:n]
        if not records or not self._alive:
            if records and self._say:
                said, self._say = self._say, ""  # say it once
                warnings.warn(said, RuntimeWarning, stacklevel=4)
            return
        if not force and self._pending_bytes >= self._max_pending:
            self._drop(len(records))
            return
        data = frame(records)
        if self.process is None:
            self._kept.append(data)
            return
        self._pending.append(memoryview(data))
        self._pending_bytes += len(data)

    def _drop(self, events: int) -> None:
        self.dropped += events
        if self.dropped == events:
            warnings.warn(
                "the span export process is behind: events dropped "
                "(OTEL_BSP_MAX_QUEUE_SIZE sets how many may wait)",
                RuntimeWarning,
                stacklevel=5,
            )

    def _drain(self) -> bool:
        """Write what the pipe takes now (the caller holds `_sending`); True when all."""
        pending = self._pending
        while pending:
            view = pending[0]
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:
                return False
            except OSError:
                pending.clear()
                self._died()
                return False
            self._pending_bytes -= written
            if written < len(view):
                pending[0] = view[written:]
                return False
            pending.popleft()
        return True

    def _drain_all(self, deadline: float) -> bool:
        """Write everything pending, waiting for the pipe until `deadline`."""
        while True:
            with self._sending:
                if self._drain() or not self._alive:
                    return self._alive
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            select.select([], [self._fd], [], min(left, 1.0))

    def _tick(self) -> None:
        """Once a second: send what waits (a quiet run's last events, what the pipe
        could not take)."""
        while not self._stopped.wait(1.0):
            if self._alive and (self.buffer or self._gone or self._pending):
                self.send()

    def take_frames(self) -> list[bytes]:
        """With no process: the frames it would have been sent."""
        taken, self._kept = self._kept, []
        return taken

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
        """The export process is gone: no more sends (said once, by the next sender)."""
        with self._answered:
            if self._alive and not self._closed:
                self._say = "the span export process ended: no more spans"
            self._alive = False
            self._answered.notify_all()

    def force_flush(self, timeout_s: float = 30.0) -> bool:
        """Send everything and wait until the export process exported it."""
        number = next(self._flushes)
        self.put(("f", number))
        self.send(force=True)
        if self.process is None:
            return True
        deadline = time.monotonic() + timeout_s
        if not self._drain_all(deadline):
            return False
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
        self._stopped.set()
        if self.process is None:
            return
        deadline = time.monotonic() + timeout_s
        self._drain_all(deadline)
        assert self.process.stdin is not None
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            self.process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _records(items: list[Any]) -> list[Record]:
    """The flat buffer's items (see WIDTH) as records (otel/wire.py)."""
    out: list[Record] = []
    append = out.append
    it = iter(items)
    for event, where, when in zip(it, it, it, strict=True):
        if where is None:
            append(event)
            continue
        now, extra = (when, None) if when.__class__ is int else when
        key, token = where >> TOKEN_BITS, where & TOKEN_MASK
        d = event
        append((key, token, d.seq, d.kind, d.at, d.step, d.node, d.data, now, extra))
    return out


class Forwarder:
    """A Trace subscriber (`receive`) that sends each event, and where it was emitted, to
    the export process. It makes a run span's ids here (see the module doc), and keeps
    budget reservations to itself: their figures go with the model call they were for
    (all the span view uses them for), two events fewer to send per call."""

    def __init__(self, channel: Channel, tracer: Any, trace: Trace) -> None:
        self._put = channel.put
        self._channel = channel
        self._sampler = tracer.sampler
        self._ids = tracer.id_generator
        self._trace = weakref.ref(trace)
        self._key = next(_keys)
        self._open_runs: set[Any] = set()  # kernel runs (phase events) still open
        self._reserved: dict[Any, dict[str, Any]] = {}  # reservation -> budget figures
        self._off = False
        self.receive = self._receiver()

    def _receiver(self) -> Callable[[Event], None]:
        """The subscriber: a closure, the cheapest call there is for the common event."""
        extend, buffer, send = self._channel.buffer.extend, self._channel.buffer, self._channel.send
        new_token, special, where = self._channel.new_token, self._special, self._key << TOKEN_BITS
        limit = BATCH * WIDTH

        def receive(event: Event) -> None:
            if self._off:
                return
            try:
                loop = _get_running_loop()
                task = current_task(loop) if loop is not None else None
                mark = _mark.get()
                if mark is None or mark[0] is not task:
                    mark = new_token(task, mark)
                if event.kind in _SPECIAL:
                    special(event, where | mark[1])
                    return
                extend((event, where | mark[1], _time_ns()))
                if len(buffer) >= limit:
                    send()
            except Exception as exc:
                # Tracing must never break the run it watches: this view stops, says so.
                self._off = True
                warnings.warn(
                    f"no more spans for this run: forwarding a {event.kind} event failed "
                    f"({type(exc).__name__}: {exc})",
                    RuntimeWarning,
                    stacklevel=2,
                )

        return receive

    def _special(self, event: Event, where: int) -> None:
        """Runs, budget reservations and the model calls they are for."""
        d, kind = event.data, event.kind
        if kind == "budget_reserve":
            self._reserved[d.get("reservation")] = {
                "reserved_prompt_tokens": d.get("prompt_tokens"),
                "granted_completion_tokens": d.get("completion_tokens"),
            }
            return
        if kind == "budget_reconcile":
            figures = self._reserved.get(d.get("reservation"))
            if figures is not None:
                figures["refund_tokens"] = d.get("refund_tokens")
            return
        extra: tuple[str, Any] | None = None
        run = None
        if kind in ("model_call", "model_error"):
            figures = self._reserved.pop(d.get("reservation"), None)
            extra = ("budget", figures) if figures is not None else None
        else:
            run = self._run_ids(event)
            extra = ("run", run) if run is not None else None
        self._channel.buffer.extend((event, where, (_time_ns(), extra)))
        if run is not None:
            self._record(event, run)

    def close_all(self, why: str) -> None:
        """End the trace's open spans (it was dropped, or the process exits)."""
        if not self._off:
            self._off = True
            self._put(("c", self._key, why))

    def _run_ids(self, event: Event) -> RunIdsRecord | None:
        """The ids of the run span `event` opens (as SpanView decides), else None."""
        d = event.data
        if event.kind == "run_end":  # opens nothing; a loop's ends its run
            self._open_runs.discard(d.get("run_id"))
            return None
        if event.kind == "phase":
            run_id = d.get("run_id")
            if run_id is None:
                return None
            if run_id in self._open_runs:
                return None
            self._open_runs.add(run_id)
            family = event.step
        else:  # run_start: a search's, or a loop's (its family is the step)
            run_id, family = d.get("run_id", ""), event.step or "search"
            self._open_runs.add(run_id)
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
