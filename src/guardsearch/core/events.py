"""Events: the append-only trace of a run.

Every model call, guard verdict, retry, budget movement, expansion and loop phase
is an Event. Metrics, the viewer, replay and tuning read events; nothing else needs
special hooks.

A process-wide observer (`watch_traces`) is handed every Trace made after it was
registered, so it can subscribe to runs it never saw created (the OpenTelemetry
view, guardsearch/otel/, does this); a subscriber may emit an event of its own,
which every subscriber receives after the event it reacts to, in `seq` order.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

EventKind = Literal[
    "run_start",
    "run_end",
    "step_start",
    "step_end",
    "model_call",
    "model_escalation",
    "model_error",
    "guard_verdict",
    "retry",
    "patch_applied",
    "budget_reserve",
    "budget_reconcile",
    "budget_exceeded",
    "expansion",
    "candidate_dropped",
    "backtrack",
    "phase",
    "note",
]


@dataclass(frozen=True, kw_only=True)
class Event:
    """One thing that happened, with when and where."""

    seq: int
    kind: EventKind
    at: float
    step: str = ""
    node: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "kind": self.kind,
            "at": self.at,
            "step": self.step,
            "node": self.node,
            "data": self.data,
        }


Subscriber = Callable[[Event], None]
TraceObserver = Callable[["Trace"], None]

# Called with every new Trace (`watch_traces`); empty unless something registered.
_observers: list[TraceObserver] = []


def watch_traces(observer: TraceObserver) -> Callable[[], None]:
    """Call `observer(trace)` for every Trace made from now on; returns the undo."""
    _observers.append(observer)

    def unwatch() -> None:
        if observer in _observers:
            _observers.remove(observer)

    return unwatch


class Trace:
    """An append-only list of events with subscribers (callbacks, sinks).

    `record_content`: model calls put their prompt and completion text in their
    events (off by default: prompts are large and may be private; an observer that
    the user asked to capture content turns it on).
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._events: list[Event] = []
        self._subscribers: list[Subscriber] = []
        self._clock = clock
        self._delivering = False
        self._later: list[Event] = []  # events emitted while one was being delivered
        self.record_content = False
        for observer in tuple(_observers):
            observer(self)

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    def emit(self, kind: EventKind, *, step: str = "", node: str = "", **data: Any) -> Event:
        event = Event(
            seq=len(self._events), kind=kind, at=self._clock(), step=step, node=node, data=data
        )
        self._events.append(event)
        if self._delivering:  # a subscriber emitted: delivered after the one it reacts to
            self._later.append(event)
            return event
        self._delivering = True
        try:
            for subscriber in self._subscribers:
                subscriber(event)
            while self._later:
                later = self._later.pop(0)
                for subscriber in self._subscribers:
                    subscriber(later)
        except BaseException:
            self._later.clear()
            raise
        finally:
            self._delivering = False
        return event

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    def of_kind(self, kind: EventKind) -> list[Event]:
        return [e for e in self._events if e.kind == kind]

    def __len__(self) -> int:
        return len(self._events)
