"""The Outcome base: the fields every family's result shares, serialised one way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from guardsearch import Usage
from guardsearch.core.events import Trace
from guardsearch.core.outcome import CORE_STOP_REASONS, Outcome

# "steering" (issue 16): repeats, repairs and prevented failures, shared by every family.
SHARED = ["succeeded", "stop_reason", "run_id", "usage", "seconds", "steering"]


@dataclass(frozen=True, kw_only=True)
class Counted(Outcome):
    items: int

    def details(self) -> dict[str, Any]:
        return {"items": self.items}


def test_as_dict_writes_the_shared_fields_then_the_familys() -> None:
    usage = Usage(calls=2, prompt_tokens=10, completion_tokens=5)
    outcome = Counted(
        succeeded=True,
        stop_reason="success",
        usage=usage,
        seconds=1.23456,
        run_id="abcd",
        trace=Trace(),
        items=3,
    )
    assert outcome.as_dict() == {
        "succeeded": True,
        "stop_reason": "success",
        "run_id": "abcd",
        "usage": usage.as_dict(),
        "seconds": 1.235,
        "steering": {
            "outputs": 0,
            "repeats": 0,
            "repeat_share": 0.0,
            "repairs": 0,
            "prevented": 0,
        },
        "items": 3,
    }
    assert list(outcome.as_dict())[:6] == SHARED


def test_the_core_stop_reasons_name_what_any_run_can_run_into() -> None:
    assert {"success", "budget_exhausted", "deadline", "max_iterations", "cancelled"} <= (
        CORE_STOP_REASONS
    )
    assert {"step_failed", "model_error", "run_error", "invalid_request", "internal_error"} <= (
        CORE_STOP_REASONS
    )
