"""Usage per model of a run whose model is a ladder, summed from its trace.

`Metered` marks each call a model ladder answered (`model_call` events with `rung`);
this adds them up per model: calls, tokens, seconds and escalations (calls a rung
above their role's first rung answered). A run on one model has no such events and
gets an empty summary, so its results look as they always did.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from guardsearch.core.events import Event

_FIELDS = ("calls", "prompt_tokens", "completion_tokens", "cached_prompt_tokens")


def _plain(event: Event | Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    if isinstance(event, Event):
        return event.kind, event.data
    return str(event.get("kind", "")), event.get("data") or {}


def model_usage(events: Iterable[Event | Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per model a ladder used: calls, prompt/completion/cached tokens, seconds, escalations.

    Models appear in rung order. Takes `Event`s or their `as_dict()` form.
    """
    rows: dict[str, dict[str, Any]] = {}
    for event in events:
        kind, data = _plain(event)
        if kind != "model_call" or "rung" not in data:
            continue
        name = str(data.get("model", ""))
        row = rows.setdefault(
            name,
            {"rung": int(data["rung"]), **dict.fromkeys(_FIELDS, 0), "seconds": 0.0},
        )
        row["calls"] += 1
        for key in _FIELDS[1:]:
            row[key] += int(data.get(key) or 0)
        row["seconds"] += float(data.get("wall_s") or 0.0)
        row["escalations"] = row.get("escalations", 0) + (1 if data.get("escalated") else 0)
    ordered = sorted(rows.items(), key=lambda item: item[1]["rung"])
    return {name: {**row, "seconds": round(row["seconds"], 3)} for name, row in ordered}


def merge_model_usage(
    summaries: Iterable[Mapping[str, Mapping[str, Any]]],
) -> dict[str, dict[str, Any]]:
    """Several runs' `model_usage` summed per model (a scorecard's many trials)."""
    total: dict[str, dict[str, Any]] = {}
    for summary in summaries:
        for name, row in summary.items():
            into = total.setdefault(name, {"rung": row.get("rung", 0)})
            for key, value in row.items():
                if key != "rung":
                    into[key] = into.get(key, 0) + value
    ordered = sorted(total.items(), key=lambda item: item[1]["rung"])
    return {
        name: {**row, "seconds": round(float(row.get("seconds", 0.0)), 3)} for name, row in ordered
    }
