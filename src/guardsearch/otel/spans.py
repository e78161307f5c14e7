"""SpanView: one Trace's events, as OpenTelemetry spans while they happen.

The tree (docs/observability.md):

    invoke_workflow search | research | review | inner_outer   (run_start/run_end, phases)
      phase {name}                 a loop's phase, until the next one (kernel runs)
      expansion {level}            a search node's expansion (node id, its parent)
        step {name}                a guarded step (run_step)
          attempt {name}           one attempt, until the retry or the step's end
            chat {model}           a model call: GenAI attributes, tokens, budget
            guard {name}           a verdict: passed, score, stage; feedback as an event

Which span a new one hangs under is the innermost one open in the emitting task (a
context variable, so concurrent steps and calls each find their own), else the span
of the caller's context (an HTTP request's). Retries, drops, notes, budget stops and
escalations are span events. Start and end times are those of the events (a model
call starts its `wall_s` before its event); a verdict span has no duration of its own.
"""

from __future__ import annotations

import time
import warnings
import weakref
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace as trace_api
from opentelemetry.trace import Link, SpanContext, SpanKind, TraceFlags

from guardsearch.core.events import Event, Trace
from guardsearch.otel import genai
from guardsearch.otel.keys import LINKS_KEY, SPAN_KEY
from guardsearch.otel.recorder import Recorded, Recorder

# The innermost open scope of the task that emits (each asyncio task has its own copy).
_current: ContextVar[_Scope | None] = ContextVar("guardsearch_otel_scope", default=None)


@dataclass(eq=False)
class _Scope:
    span: Recorded
    kind: str  # run, phase, expansion, step, attempt
    key: str  # the run id, phase, node id or step name
    parent: _Scope | None
    run: _Scope | None  # the run it belongs to (itself for a run)
    family: str = ""  # a run's: search, research, review, inner_outer
    ended: bool = False
    children: list[_Scope] = field(default_factory=list)


def _context(scope: _Scope | None) -> SpanContext | None:
    """The span context a span under `scope` starts in (None: the caller's current one)."""
    return scope.span.context if scope is not None else None


def _live(scope: _Scope | None) -> _Scope | None:
    while scope is not None and scope.ended:
        scope = scope.parent
    return scope


class SpanView:
    """A Trace subscriber that makes spans of the trace's events (see the module doc)."""

    def __init__(self, recorder: Recorder, trace: Trace | None) -> None:
        self.recorder = recorder
        # None: replaying another process's events (otel/export_process.py), whose
        # run-span ids that process made and recorded itself (`preset`).
        self._trace: Callable[[], Trace | None] = (
            weakref.ref(trace) if trace is not None else _no_trace
        )
        self._roots: list[_Scope] = []  # open scopes with no parent scope
        self._runs: list[_Scope] = []  # open runs, oldest first
        self._expansions: dict[str, _Scope] = {}  # open expansions by node id
        self._parents: dict[str, str] = {}  # node id -> parent id (from the verdicts)
        self._reserved: dict[Any, dict[str, Any]] = {}  # reservation id -> budget figures
        self._links: list[Link] = []  # for the next run span (a resumed durable run)
        self._off = False  # tracing was turned off: no more spans
        self.preset: RunIds | None = None  # the ids of the run span the next event opens
        self._handlers = {
            "run_start": self._run_start,
            "run_end": self._run_end,
            "phase": self._phase,
            "expansion": self._expansion,
            "step_start": self._step_start,
            "step_end": self._step_end,
            "retry": self._retry,
            "model_call": self._model_call,
            "model_error": self._model_call,
            "guard_verdict": self._verdict,
            "budget_reserve": self._budget_reserve,
            "budget_reconcile": self._budget_reconcile,
            "budget_exceeded": self._stopped,
            "note": self._note,
        }

    def __call__(self, event: Event, now: int | None = None) -> None:
        """Turn `event` into spans; `now` is when it was emitted (default: now)."""
        if self._off:
            return
        if now is None:
            now = time.time_ns()
        try:
            handler = self._handlers.get(event.kind)
            if handler is not None:
                handler(event, now)
            else:  # candidate_dropped, patch_applied, backtrack, model_escalation
                self._mark(self._here(event), event, now)
        except Exception as exc:
            # Tracing must never break the run it watches: this view stops, and says so.
            self._off = True
            warnings.warn(
                f"no more spans for this run: the span view failed on a {event.kind} "
                f"event ({type(exc).__name__}: {exc})",
                RuntimeWarning,
                stacklevel=2,
            )

    # -- the scope tree -----------------------------------------------------------------

    def _here(self, event: Event | None = None) -> _Scope | None:
        """Where a new span goes: the innermost open scope of this task; an event about a
        node whose expansion is open goes there when the task has nothing deeper."""
        scope = _live(_current.get())
        if event is not None and event.node and (scope is None or scope.kind == "run"):
            scope = self._expansions.get(event.node, scope)
        if scope is None and self._runs:
            scope = self._runs[-1]
        return scope

    def _open(
        self,
        name: str,
        kind: str,
        key: str,
        parent: _Scope | None,
        attrs: dict[str, Any],
        now: int,
        links: list[Link] | None = None,
        span: Recorded | None = None,
    ) -> _Scope:
        if span is None:
            span = self.recorder.start(name, _context(parent), attrs, now, links=links or ())
        run = parent.run if parent is not None else None
        scope = _Scope(span, kind, key, parent, run)
        if kind == "run":
            scope.run = scope
        (parent.children if parent is not None else self._roots).append(scope)
        _current.set(scope)
        return scope

    def _close(self, scope: _Scope, now: int, error: str | None = None) -> None:
        """End `scope` and everything still open under it; the task's scope moves up."""
        if scope.ended:
            return
        for child in scope.children:
            self._close(child, now, error="unfinished" if not child.ended else None)
        scope.ended = True
        scope.children = []
        if error is not None:
            scope.span.fail(error)
        self.recorder.end(scope.span, now)
        siblings = scope.parent.children if scope.parent is not None else self._roots
        if scope in siblings:
            siblings.remove(scope)
        if scope.kind == "expansion" and self._expansions.get(scope.key) is scope:
            del self._expansions[scope.key]
        if scope.kind == "run" and scope in self._runs:
            self._runs.remove(scope)
        current = _current.get()
        if current is not None and current.ended:
            _current.set(_live(current))

    def close_all(self, why: str) -> None:
        """End every span still open (a run that never emitted its end, a step an error
        left), as errors; the view makes no more spans."""
        self._off = True
        now = time.time_ns()
        for scope in list(self._roots):
            self._close(scope, now, error=why)

    def _mark(self, scope: _Scope | None, event: Event, now: int) -> None:
        """`event` as a span event on `scope`'s span (nothing when no span is open)."""
        if scope is None:
            return
        attrs = genai.flat("guardsearch", event.data)
        if event.step:
            attrs["guardsearch.step"] = event.step
        if event.node:
            attrs["guardsearch.node.id"] = event.node
        scope.span.add_event(event.kind, attrs, now)

    # -- runs and phases ------------------------------------------------------------------

    def _open_run(self, family: str, run_id: str, attrs: dict[str, Any], now: int) -> _Scope:
        parent = _live(_current.get())
        base = {
            "gen_ai.operation.name": "invoke_workflow",
            "gen_ai.workflow.name": family,
            "guardsearch.run.id": run_id,
        }
        links, self._links = self._links, []
        preset, self.preset = self.preset, None
        name, attrs = f"invoke_workflow {family}", {**base, **attrs}
        span = None
        if preset is not None:  # ids the emitting process made (and recorded) for it
            span = preset.span(name, _context(parent), attrs, now, links)
        run = self._open(name, "run", run_id, parent, attrs, now, links, span)
        run.family = family
        self._runs.append(run)
        if parent is None:  # the caller's span (an HTTP request) learns the run id
            outer = trace_api.get_current_span()
            if outer.is_recording():
                outer.set_attribute("guardsearch.run.id", run_id)
        trace = self._trace()
        if trace is not None and preset is None:
            ctx = run.span.context
            ids = {"trace_id": f"{ctx.trace_id:032x}", "span_id": f"{ctx.span_id:016x}"}
            trace.emit("note", run_id=run_id, span=ids)  # SPAN_KEY
        return run

    def _run_start(self, event: Event, now: int) -> None:
        d = event.data
        attrs = genai.flat("guardsearch", d, skip=("run_id", "options"))
        attrs.update(genai.flat("guardsearch.option", d.get("options") or {}))
        self._open_run(event.step or "search", str(d.get("run_id", "")), attrs, now)

    def _run_end(self, event: Event, now: int) -> None:
        if event.step not in ("", "search"):  # a loop's: its family is the step
            self._loop_end(event, now)
            return
        run = self._innermost_run("search")
        if run is None:
            return
        d = event.data
        attrs = genai.flat("guardsearch", d, skip=("used", "steering", "termination"))
        attrs["guardsearch.stop_reason"] = str(d.get("termination") or "error")
        attrs.update(genai.usage(d.get("used") or {}))
        attrs.update(genai.flat("guardsearch.steering", d.get("steering") or {}))
        run.span.set_attributes(attrs)
        error = d.get("error")
        if error:
            run.span.set_attribute("error.type", str(error))
        self._close(run, now, error=str(error) if error else None)

    def _innermost_run(self, family: str) -> _Scope | None:
        scope = _live(_current.get())
        while scope is not None:
            if scope.kind == "run" and scope.family == family:
                return scope
            scope = scope.parent
        found = [r for r in self._runs if r.family == family]
        return found[-1] if found else None

    def _phase(self, event: Event, now: int) -> None:
        d = event.data
        run_id = d.get("run_id")
        if run_id is None:  # a search strategy's step (descend, climb): an event
            self._mark(self._here(event), event, now)
            return
        run = next((r for r in reversed(self._runs) if r.key == run_id), None)
        if run is None:
            run = self._open_run(event.step, str(run_id), {}, now)
        for child in list(run.children):
            if child.kind == "phase":
                self._close(child, now)
        name = str(d.get("phase", ""))
        attrs = genai.flat("guardsearch", d, skip=("run_id", "phase", "steering", "used"))
        attrs["guardsearch.phase"] = name
        self._open(f"phase {name}", "phase", name, run, attrs, now)

    def _loop_end(self, event: Event, now: int) -> None:
        """A loop's `run_end`: its last phase and its run span end, with the stop reason,
        usage and steering counts on the run."""
        d = event.data
        run_id = d.get("run_id")
        run = next((r for r in reversed(self._runs) if r.key == run_id), None)
        if run is None:
            return
        for child in list(run.children):
            if child.kind == "phase":
                self._close(child, now)
        attrs = genai.flat("guardsearch", d, skip=("run_id", "steering", "used"))
        attrs["guardsearch.stop_reason"] = str(d.get("stop_reason", ""))
        attrs.update(genai.usage(d.get("used") or {}))
        attrs.update(genai.flat("guardsearch.steering", d.get("steering") or {}))
        run.span.set_attributes(attrs)
        self._close(run, now)

    # -- expansions, steps, attempts -----------------------------------------------------

    def _expansion(self, event: Event, now: int) -> None:
        d = event.data
        if d.get("phase") == "start":
            attrs = genai.flat("guardsearch.expansion", d, skip=("phase",))
            attrs["guardsearch.node.id"] = event.node
            parent_id = self._parents.get(event.node)
            if parent_id is not None:
                attrs["guardsearch.node.parent_id"] = parent_id
            attrs["guardsearch.step"] = event.step
            parent = self._here()
            scope = self._open(
                f"expansion {event.step}", "expansion", event.node, parent, attrs, now
            )
            self._expansions[event.node] = scope
            return
        ending = self._expansions.get(event.node)
        if ending is None:
            return
        children = d.get("children") or []
        attrs = genai.flat("guardsearch.expansion", d, skip=("phase", "children"))
        attrs["guardsearch.expansion.children"] = len(children)
        ending.span.set_attributes(attrs)
        self._close(ending, now)

    def _step_start(self, event: Event, now: int) -> None:
        attrs = {"guardsearch.step": event.step, "guardsearch.step.rmax": event.data.get("rmax", 0)}
        step = self._open(f"step {event.step}", "step", event.step, self._here(), attrs, now)
        self._open_attempt(step, 1, now)

    def _open_attempt(self, step: _Scope, number: int, now: int) -> None:
        attrs = {"guardsearch.step": step.key, "guardsearch.attempt": number}
        self._open(f"attempt {step.key}", "attempt", step.key, step, attrs, now)

    def _step_of(self, name: str) -> _Scope | None:
        """The open step `name` on this task's chain (steps nest: a guard's own step)."""
        scope = _live(_current.get())
        while scope is not None and scope.kind in ("step", "attempt"):
            if scope.kind == "step" and scope.key == name:
                return scope
            scope = scope.parent
        return None

    def _retry(self, event: Event, now: int) -> None:
        step = self._step_of(event.step)
        if step is None:  # a search strategy's retry of a node: an event
            self._mark(self._here(event), event, now)
            return
        for child in list(step.children):
            self._close(child, now)
        attrs = genai.flat("guardsearch.retry", event.data, skip=("attempt",))
        step.span.add_event("retry", attrs, now)
        self._open_attempt(step, int(event.data.get("attempt", len(step.children) + 2)), now)

    def _step_end(self, event: Event, now: int) -> None:
        step = self._step_of(event.step)
        if step is None:
            return
        d = event.data
        attrs = genai.flat("guardsearch.step", d, skip=("steering",))
        attrs.update(genai.flat("guardsearch.steering", d.get("steering") or {}))
        step.span.set_attributes(attrs)
        passed = bool(d.get("passed"))
        self._close(step, now, error=None if passed else "the guards rejected every attempt")

    def _stopped(self, event: Event, now: int) -> None:
        """A budget stop (or a failed model call): the innermost step ends with it (the
        error leaves `run_step`); the stop is an event where it happened."""
        here = self._here(event)
        self._mark(here, event, now)
        scope = _live(_current.get())
        step = None
        while scope is not None and scope.kind in ("step", "attempt"):
            if scope.kind == "step":
                step = scope
                break
            scope = scope.parent
        if step is not None:
            reason = event.data.get("reason") or event.data.get("error_type") or event.kind
            self._close(step, now, error=str(reason))

    # -- model calls, verdicts, budget ---------------------------------------------------

    def _budget_reserve(self, event: Event, now: int) -> None:
        d = event.data
        self._reserved[d.get("reservation")] = {
            "reserved_prompt_tokens": d.get("prompt_tokens"),
            "granted_completion_tokens": d.get("completion_tokens"),
        }

    def _budget_reconcile(self, event: Event, now: int) -> None:
        figures = self._reserved.get(event.data.get("reservation"))
        if figures is not None:
            figures["refund_tokens"] = event.data.get("refund_tokens")

    def _model_call(self, event: Event, now: int) -> None:
        d = event.data
        reserved = self._reserved.pop(d.get("reservation"), {})
        attrs = genai.model_call(d, event.step, event.node, reserved)
        start = now - int(float(d.get("wall_s") or 0.0) * 1e9)
        name = f"{genai.OPERATION} {d.get('model', '')}"
        parent = _context(self._here(event))
        span = self.recorder.start(name, parent, attrs, start, kind=SpanKind.CLIENT)
        if event.kind == "model_error":
            span.set_attribute("error.type", str(d.get("error_type", "_OTHER")))
            span.fail(str(d.get("error", ""))[:500])
        self.recorder.end(span, now)
        if event.kind == "model_error":
            self._stopped(event, now)

    def _verdict(self, event: Event, now: int) -> None:
        d = event.data
        parent_id = d.get("parent")
        if parent_id:
            self._parents[event.node] = str(parent_id)
        parent = self._expansions.get(str(parent_id)) if parent_id else None
        attrs = genai.verdict(d, event.step, event.node)
        span = self.recorder.start(
            f"guard {d.get('guard', '')}", _context(parent or self._here(event)), attrs, now
        )
        feedback = d.get("feedback")
        if feedback:
            span.add_event("feedback", {"guardsearch.guard.feedback": str(feedback)}, now)
        self.recorder.end(span, now)

    def _note(self, event: Event, now: int) -> None:
        d = event.data
        if SPAN_KEY in d:
            return  # our own record of a run span
        if LINKS_KEY in d:
            self._links.extend(link_to(ids) for ids in d[LINKS_KEY] if valid_ids(ids))
            return
        self._mark(self._here(event), event, now)


def _no_trace() -> None:
    return None


@dataclass(frozen=True)
class RunIds:
    """A run span's ids, made where its events were emitted: the trace and span id,
    whether it is sampled, and the caller's span it continues (`(trace id, span id,
    remote, flags)`, or None)."""

    trace_id: int
    span_id: int
    flags: int
    outer: tuple[int, int, bool, int] | None

    def span(
        self,
        name: str,
        parent: SpanContext | None,
        attrs: dict[str, Any],
        now: int,
        links: list[Link],
    ) -> Recorded:
        """The run span; under `parent` (a scope open in this replay) when there is one."""
        if parent is None and self.outer is not None:
            trace_id, span_id, remote, flags = self.outer
            parent = SpanContext(trace_id, span_id, remote, TraceFlags(flags))
        if parent is not None:
            trace_id, flags = parent.trace_id, int(parent.trace_flags)
        else:
            trace_id, flags = self.trace_id, self.flags
        context = SpanContext(trace_id, self.span_id, False, TraceFlags(flags))
        return Recorded(name, context, parent, SpanKind.INTERNAL, attrs, now, links)


def valid_ids(ids: Any) -> bool:
    """A stored `{"trace_id": 32 hex, "span_id": 16 hex}` (other shapes are skipped)."""
    try:
        return int(ids["trace_id"], 16) != 0 and int(ids["span_id"], 16) != 0
    except (KeyError, TypeError, ValueError):
        return False


def link_to(ids: dict[str, str]) -> Link:
    """A span link to a stored run span (an earlier session of a durable run)."""
    context = SpanContext(
        trace_id=int(ids["trace_id"], 16),
        span_id=int(ids["span_id"], 16),
        is_remote=True,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )
    return Link(context, attributes={"guardsearch.link": "resumes"})
