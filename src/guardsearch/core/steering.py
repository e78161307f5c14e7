"""Steering: did the guards' verdicts change what the model did next? (issue 16)

Three counts say how feedback was spent, for any run, from its events:

- `repeats`: outputs that repeated one already judged at the same node (a step's
  earlier attempt, a search node's earlier child), dropped before any guard ran;
  `repeat_share` is their share of all `outputs` (judged + repeated);
- `repairs`: outputs a guard's JSON Patch fixed, accepted without a model call;
- `prevented`: outputs decoded under a constraint a guard declared, by a backend that
  enforces the request's JSON Schema: each one an output on which that rule could not
  fail (a failure the constraint took away, not one observed).

The events are the ones steps and the search engine emit: `guard_verdict` (one per
judged output; a re-check of a repaired value has `stage="repair"` and is no new
output), `candidate_dropped` with `reason="duplicate"`, and `patch_applied` with
`passed=True`; an output decoded under an enforced constraint has `prevented=True`
on its verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from guardsearch.core.events import Event


@dataclass(frozen=True, kw_only=True)
class Steering:
    """Outputs judged or dropped, and how many were repeats, repairs or prevented
    failures. Adds field by field, so a loop can sum its steps'."""

    outputs: int = 0
    repeats: int = 0
    repairs: int = 0
    prevented: int = 0

    @property
    def repeat_share(self) -> float:
        """Repeats as a share of all outputs (0 when there were none)."""
        return self.repeats / self.outputs if self.outputs else 0.0

    def __add__(self, other: Steering) -> Steering:
        return Steering(
            outputs=self.outputs + other.outputs,
            repeats=self.repeats + other.repeats,
            repairs=self.repairs + other.repairs,
            prevented=self.prevented + other.prevented,
        )

    def as_dict(self) -> dict[str, int | float]:
        return {
            "outputs": self.outputs,
            "repeats": self.repeats,
            "repeat_share": round(self.repeat_share, 4),
            "repairs": self.repairs,
            "prevented": self.prevented,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Steering:
        data = data or {}
        names = ("outputs", "repeats", "repairs", "prevented")
        return cls(**{k: int(data.get(k, 0)) for k in names})

    @classmethod
    def from_events(
        cls, events: Iterable[Event | Mapping[str, Any]], *, step: str | None = None
    ) -> Steering:
        """The counts in a trace (Event objects, or their `as_dict()` forms); with
        `step`, only that step's outputs (e.g. "research-synthesize")."""
        outputs = repeats = repairs = prevented = 0
        for event in events:
            kind: Any
            at: Any
            if isinstance(event, Event):
                kind, data, at = event.kind, event.data, event.step
            else:
                kind, data, at = event.get("kind"), event.get("data") or {}, event.get("step")
            # The step is the event's own field (Trace.emit's `step=`), not a data key.
            if step is not None and at != step:
                continue
            if kind == "guard_verdict" and data.get("stage") != "repair":
                outputs += 1
                prevented += bool(data.get("prevented"))
            elif kind == "candidate_dropped" and data.get("reason") == "duplicate":
                outputs += 1
                repeats += 1
            elif kind == "patch_applied" and data.get("passed"):
                repairs += 1
        return cls(outputs=outputs, repeats=repeats, repairs=repairs, prevented=prevented)


NO_STEERING = Steering()
