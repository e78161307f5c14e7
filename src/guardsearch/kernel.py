"""The run kernel: the shell every run shares, a search (search/run.py) and every
loop (research, review, inner/outer).

    kernel = Kernel("review", model, Budget.of(budget), trace=trace)
    kernel.phase("plan")                          # a `phase` event with the fixed fields
    planned = await kernel.attempt("plan", task.plan(request, kernel.metered))
    ...
    return ReviewRun(..., **kernel.finish("threshold_met"))

A kernel holds the run id, the trace, the metered model (the only way the run's
model calls meet its budget; a search may bring its own `Metered`) and the clock.
Every run opens with `run_start`: a search's `start(...)` says its strategy and
options; a loop's comes by itself, just before its first event. Every phase event
carries the same fixed
fields, `phase`, `run_id` and `t` (seconds since the run started), under the event's
`step` = the family, plus what the family adds to every event (`standing`) and to this
one. A run error inside `attempt` becomes a `Stop` carrying the stop reason from the
one core mapping (`core/outcome.py`); a family decides what a stop means for it (an
error response, a caveat, a note). `finish` emits the run's `run_end` event, the one
end event of every run, and returns the fields every outcome shares.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from guardsearch.core.budget import Budget
from guardsearch.core.errors import RunError
from guardsearch.core.events import Event, EventKind, Trace
from guardsearch.core.outcome import StopReason, new_run_id, stop_reason_for
from guardsearch.core.steering import Steering
from guardsearch.models.base import Model
from guardsearch.models.metered import Metered

T = TypeVar("T")

# The fields every phase event has in its data, whatever the family.
FIXED_FIELDS = ("phase", "run_id", "t")


class Stop(Exception):
    """A phase's run error ended the run: the stop reason, the phase, the error."""

    def __init__(self, reason: StopReason, phase: str, error: RunError) -> None:
        super().__init__(f"{phase}: {error}")
        self.reason = reason
        self.phase = phase
        self.error = error


class Kernel:
    """One run's run id, trace, metered model and clock, and its events."""

    def __init__(
        self,
        family: str,
        model: Model | Metered,
        budget: Budget | None = None,
        *,
        trace: Trace | None = None,
        run_id: str | None = None,
        clock: Callable[[], float] = time.perf_counter,
        started: float | None = None,
        standing: Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        self.family = family
        self.run_id = run_id or new_run_id()
        if isinstance(model, Metered):  # metered already (its budget and trace)
            self.metered, self.trace = model, model.trace
        else:
            self.trace = trace if trace is not None else Trace()
            self.metered = Metered(model, budget if budget is not None else Budget(), self.trace)
        self.clock = clock
        self.started = clock() if started is None else started
        self.standing = standing
        self.opened = False  # run_start emitted

    @property
    def budget(self) -> Budget:
        return self.metered.budget

    def elapsed(self) -> float:
        return self.clock() - self.started

    def start(self, **data: Any) -> Event:
        """Emit `run_start` (`run_id`, `t`, the standing fields, `data`); a run that
        does not call it gets a bare one before its first phase or its end."""
        self.opened = True
        return self._emit("run_start", {}, data)

    def phase(self, name: str, **data: Any) -> Event:
        """Emit the `phase` event `name`: the fixed fields, the standing ones, `data`."""
        return self._emit("phase", {"phase": name}, data)

    def _emit(self, kind: EventKind, head: dict[str, Any], data: dict[str, Any]) -> Event:
        if not self.opened:
            self.start()
        standing = dict(self.standing()) if self.standing is not None else {}
        fixed = {**head, "run_id": self.run_id, "t": round(self.elapsed(), 4)}
        return self.trace.emit(kind, step=self.family, **fixed, **standing, **data)

    async def attempt(self, phase: str, work: Awaitable[T]) -> T:
        """Await `work`; a run error (budget, step, model) becomes a `Stop`."""
        try:
            return await work
        except RunError as exc:
            raise Stop(stop_reason_for(exc), phase, exc) from exc

    def finish(self, stop_reason: str, **data: Any) -> dict[str, Any]:
        """Emit `run_end` (`run_id`, `t`, the stop reason, the run's steering counts,
        core/steering.py, its usage and its budget, under `step` = the family; `data`
        adds to them, or replaces them: a resumed search counts its saved usage and
        steering); the fields every outcome shares (usage, seconds, ...)."""
        seconds = self.elapsed()
        if "steering" not in data:
            data["steering"] = Steering.from_events(self.trace.events).as_dict()
        shared = {"used": self.metered.usage.as_dict(), "budget": self.budget.describe()}
        end = {"stop_reason": stop_reason, **shared, **data}
        self._emit("run_end", {}, end)
        return {
            "stop_reason": stop_reason,
            "usage": self.metered.usage,
            "seconds": seconds,
            "run_id": self.run_id,
            "trace": self.trace,
        }


def phase_record(event: Event) -> dict[str, Any]:
    """A phase (or `run_end`) event as one flat JSON-ready record: `step` (the family)
    and its data."""
    return {"step": event.step, **event.data}
