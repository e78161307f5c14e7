"""Spans made in a separate process: the run's own process only hands its events over.

Making a span and encoding it for OTLP costs the OpenTelemetry Python SDK tens of
microseconds, as much CPU as the search engine spends on a whole expansion, and in
one process it all holds the GIL the run needs. So when guardsearch sets up the
exporter itself (an OTLP endpoint in the environment, `--otel`), the spans are made in
an export process (otel/export_process.py) at the lowest priority: this process
appends each event, with a token for the context (asyncio task, thread) that emitted it,
to a buffer of references (no copy: the Trace keeps its events anyway), encodes it
(otel/wire.py) at a quiet moment and writes it to the export process without blocking
(Channel says when), and makes only what must be known here: a run span's ids
(recorded in the trace, for a resumed run's links; continuing the caller's span) and
the spans other instrumentation makes with the global provider (an HTTP request's),
which go over as finished spans.

What the run still pays (benchmarks/results/otel_overhead.md): about 0.3-0.5 µs an
event while it runs, and the encoding (about 2 µs an event) when it is quiet.
"""

from __future__ import annotations

import asyncio.tasks
import collections
import contextlib
import itertools
import os
import select
import subprocess
import sys
import threading
import time
import types
import typing
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
from guardsearch.core.events import Event, EventKind, Trace
from guardsearch.otel import pacing
from guardsearch.otel.wire import Record, frame, span_record

BATCH = 512  # records per frame
TICK_S = 1.0  # how often the ticker thread looks at what waits
# The buffer is flat, three items a record: (event, trace key, context token) for most
# events (the export process takes `event.at` for when it was emitted); (event, trace
# key, (token, emitted ns, extra)) for those that open or end a run (extra: ("run", run
# ids) when it opens one) and for every event of a trace with a clock of its own;
# (record, None, None) for any other record. No container made per event outlives the
# emit: the garbage collector would go through each of them, thousands a second, as
# long as they are held.
WIDTH = 3
# The emitting context's (task, token), the task by a weak reference: a new task copies
# its creator's, and so sees a mark whose task is not itself. (A strong one would make a
# cycle, task -> its context -> the mark -> task, that keeps a finished task and its
# result, a whole search tree and trace, alive until the garbage collector's next full
# pass, which then has all of it to walk: +30 % on the engine benchmark.)
_mark: ContextVar[tuple[Callable[[], Any], int] | None] = ContextVar(
    "guardsearch_otel_mark", default=None
)
_keys = itertools.count(1)
_tokens = itertools.count(1)  # process-wide: a mark outlives a channel (tests make many)
_time_ns = time.time_ns

# At exit, hand the export process what is left and do not wait for it to be exported
# (docs/observability.md says what that trades).
DETACH_ENV = "GUARDSEARCH_OTEL_DETACH"

RunIdsRecord = tuple[int, int, int, tuple[int, int, bool, int] | None]
_EVERY = frozenset(typing.get_args(EventKind))


def _task_lookup() -> Callable[[Any], Any]:
    """`loop -> the task it runs now` (None for no loop), the cheapest this Python has:
    where `asyncio.current_task` is the pure-Python one (3.11), the dict it reads."""
    tasks = getattr(asyncio.tasks, "_current_tasks", None)
    if isinstance(current_task, types.FunctionType) and isinstance(tasks, dict):
        return tasks.get

    def task_of(loop: Any) -> Any:
        return current_task(loop) if loop is not None else None

    return task_of


def _max_pending() -> int:
    """Bytes allowed to wait for the export process: the SDK's queue setting
    (`OTEL_BSP_MAX_QUEUE_SIZE`, spans), as about eight events of 160 bytes a span, and at
    least 4 MiB."""
    try:
        spans = int(os.environ.get("OTEL_BSP_MAX_QUEUE_SIZE", "2048"))
    except ValueError:
        spans = 2048
    return max(4 << 20, spans * 8 * 160)


def _max_held() -> int:
    """Records held here before they must be sent: the SDK's queue setting
    (`OTEL_BSP_MAX_QUEUE_SIZE`, spans), eight events a span (16,384 by default)."""
    try:
        spans = int(os.environ.get("OTEL_BSP_MAX_QUEUE_SIZE", "2048"))
    except ValueError:
        spans = 2048
    return max(BATCH, spans * 8)


class Channel:
    """The export process, and the pipe to it: records held here (a reference to each
    event, no copy) and written in frames without blocking; flushes answered by the
    process (with its span count and CPU time).

    Encoding the records (`marshal`) costs the run's thread about as much as forwarding
    them, so it waits for a quiet moment: a ticker thread sends what is held once a
    second passes with no new record (the run waits for a model, a request), or once
    the oldest has waited `OTEL_BSP_SCHEDULE_DELAY` (5 s); the thread whose record
    makes `_max_held` sends at once; a flush or the exit sends everything. A process
    killed outright (SIGKILL, a crash in native code) loses what was held: at most
    those 5 s or that many events, as the SDK's own batching processor would.

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
        # At exit: hand everything over and leave the export to the process (its own
        # session, so that the terminal's Ctrl-C or hang-up does not end it).
        flag = os.environ.get(DETACH_ENV, "").strip().lower()
        self.detach = flag in ("1", "true", "yes", "on")
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
        command = [sys.executable, "-m", "guardsearch.otel.export_process", str(os.getpid())]
        try:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                start_new_session=self.detach,
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
        self.limit = _max_held() * WIDTH  # buffer items: records held before a send
        self._max_wait = pacing.max_wait_s()
        self._sends = 0  # sends so far (the ticker's way to see that records came)
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
        if len(buffer) >= self.limit:
            self.send()

    def new_token(
        self, task: Any, mark: tuple[Callable[[], Any], int] | None
    ) -> tuple[Callable[[], Any], int]:
        """A token for the context emitting now, whose creator's mark is `mark`."""
        token = next(_tokens)
        self.put(("t", token, mark[1] if mark is not None else 0))
        new = (weakref.ref(task) if task is not None else _no_task, token)
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
        self._sends += 1
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
        for start in range(0, len(records), BATCH):  # frames the export process paces by
            data = frame(records[start : start + BATCH])
            if self.process is None:
                self._kept.append(data)
                continue
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
        """Every TICK_S: send what is held when no record came since the last look or
        the oldest has waited long enough; write what the pipe could not take."""
        seen, held_since = (-1, -1), 0.0
        while not self._stopped.wait(TICK_S):
            if not self._alive:
                continue
            held = len(self.buffer) + len(self._gone)
            if not held:
                seen = (-1, -1)
                if self._pending:
                    self.send()
                continue
            now, look = time.monotonic(), (self._sends, held)
            if seen[0] != look[0]:  # records came after a send: they wait from now
                held_since = now
            quiet, seen = look == seen, look
            if quiet or now - held_since >= self._max_wait or self._pending:
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
        """Send what is left, close the pipe, and wait for the process to export it
        (`detach`: do not wait; it exports on its own, for at most export_process's
        EXIT_GRACE_S)."""
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
        if self.detach:
            return
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
    for event, key, token in zip(it, it, it, strict=True):
        if key is None:
            append(event)
        elif token.__class__ is int:
            d = event
            append((key, token, d.seq, d.kind, d.at, d.step, d.node, d.data))
        else:
            d = event
            append((key, token[0], d.seq, d.kind, d.at, d.step, d.node, d.data, *token[1:]))
    return out


def _no_task() -> None:
    """The mark of a context that is no task (a thread's): its "task" is None."""
    return None


def _no_stamp() -> None:
    """No time of its own: the event's `at` says when it was emitted."""
    return None


class Forwarder:
    """A Trace subscriber (`receive`) that sends each event, and where it was emitted, to
    the export process. It makes a run span's ids here (see the module doc)."""

    def __init__(self, channel: Channel, tracer: Any, trace: Trace) -> None:
        self._put = channel.put
        self._channel = channel
        self._sampler = tracer.sampler
        self._ids = tracer.id_generator
        self._trace = weakref.ref(trace)
        self._key = next(_keys)
        self._open_runs: set[Any] = set()  # kernel runs (phase events) still open
        self._off = False
        self._stamp: Callable[[], int | None] = _no_stamp  # when an event was emitted
        self.receive = self._receiver(trace)

    def _receiver(self, trace: Trace) -> Callable[[Event], None]:
        """The subscriber: a closure, the cheapest call there is for the common event."""
        extend, buffer, send = self._channel.buffer.extend, self._channel.buffer, self._channel.send
        new_token, key = self._channel.new_token, self._key
        task_of, limit = _task_lookup(), self._channel.limit
        handlers: dict[str, Callable[[Event, int], None]] = {
            "run_start": self._run,
            "run_end": self._run,  # a loop's end closes its run here too
            "phase": self._run,
        }
        if getattr(trace, "_clock", None) is not time.time:
            # A trace on another clock (tests): each event says when it came, not `at`.
            self._stamp = _time_ns
            handlers = {kind: handlers.get(kind, self._timed) for kind in _EVERY}
        special = handlers.get

        def receive(event: Event) -> None:
            if self._off:
                return
            try:
                task = task_of(_get_running_loop())
                mark = _mark.get()
                if mark is None or mark[0]() is not task:
                    mark = new_token(task, mark)
                handler = special(event.kind)
                if handler is not None:
                    handler(event, mark[1])
                    return
                extend((event, key, mark[1]))
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

    # The events the subscriber does more with: those that open or end a run.

    def _run(self, event: Event, token: int) -> None:
        run = self._run_ids(event)
        extra = ("run", run) if run is not None else None
        self._channel.buffer.extend((event, self._key, (token, self._stamp(), extra)))
        if run is not None:
            self._record(event, run)

    def _timed(self, event: Event, token: int) -> None:
        self._channel.buffer.extend((event, self._key, (token, _time_ns(), None)))

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
