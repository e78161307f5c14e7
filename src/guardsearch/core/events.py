"""Events: the append-only trace of a run.

Every model call, guard verdict, retry, budget movement, expansion and loop phase
is an Event. Metrics, the viewer, replay and tuning read events; nothing else needs
special hooks.
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


class Trace:
    """An append-only list of events with subscribers (callbacks, sinks)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._events: list[Event] = []
        self._subscribers: list[Subscriber] = []
        self._clock = clock

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    def emit(self, kind: EventKind, *, step: str = "", node: str = "", **data: Any) -> Event:
        event = Event(
            seq=len(self._events), kind=kind, at=self._clock(), step=step, node=node, data=data
        )
        self._events.append(event)
        for subscriber in self._subscribers:
            subscriber(event)
        return event

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    def of_kind(self, kind: EventKind) -> list[Event]:
        return [e for e in self._events if e.kind == kind]

    def __len__(self) -> int:
        return len(self._events)
