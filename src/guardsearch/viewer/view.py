"""A run as the viewer's data: the JSON the page draws (live from the server, or
embedded in the one-file page of `runs view`).

Nodes are cut to what the page shows (texts capped, the verdict with its checks);
events are kept as the store has them, the newest `MAX_EVENTS` of them.
"""

from __future__ import annotations

import math
from typing import Any

MAX_TEXT = 2_000
MAX_EVENTS = 5_000
MAX_CALLS = 500


def _num(value: Any) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) or math.isinf(number) else number


def _cut(text: Any, limit: int = MAX_TEXT) -> str:
    out = "" if text is None else str(text)
    return out if len(out) <= limit else out[:limit] + "…"


def node_view(raw: dict[str, Any]) -> dict[str, Any]:
    """One saved node as the page shows it."""
    verdict = raw.get("verdict") if isinstance(raw.get("verdict"), dict) else None
    view: dict[str, Any] = {
        "id": str(raw["id"]),
        "parent": raw.get("parent"),
        "depth": int(raw.get("depth") or 0),
        "step": str(raw.get("step") or ""),
        "status": str(raw.get("status") or ""),
        "text": _cut(raw.get("text")),
        "g": _num(raw.get("g")),
        "h": _num(raw.get("h")),
        "expansions": int(raw.get("expansions") or 0),
        "attempt": raw.get("attempt"),
    }
    if raw.get("parse_error"):
        view["parse_error"] = _cut(raw["parse_error"])
    if raw.get("feedback"):
        view["history"] = [_cut(f, 500) for f in raw["feedback"]][-10:]
    if raw.get("repeats"):
        view["repeats"] = raw["repeats"]
    if verdict is not None:
        view["verdict"] = {
            "guard": str(verdict.get("guard") or ""),
            "passed": verdict.get("passed"),
            "score": _num(verdict.get("score")),
            "fatal": bool(verdict.get("fatal")),
            "feedback": _cut(verdict.get("feedback"), 1_000),
            "checks": [
                {
                    "name": str(c.get("name", "")),
                    "passed": c.get("passed"),
                    "weight": _num(c.get("weight")),
                    "hard": bool(c.get("hard")),
                    "feedback": _cut(c.get("detail") or c.get("feedback"), 500),
                }
                for c in verdict.get("checks") or []
                if isinstance(c, dict)
            ],
            **({"patch": verdict["patch"]} if verdict.get("patch") else {}),
            **({"ask": verdict["ask"]} if verdict.get("ask") else {}),
        }
    return view


def nodes_view(state: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Every saved node, in creation order."""
    return [node_view(n) for n in (state or {}).get("nodes", []) if isinstance(n, dict)]


def call_view(call: dict[str, Any]) -> dict[str, Any]:
    """A paid model call: its prompt messages and the completion's text and usage."""
    request = call.get("request") or {}
    completion = call.get("completion") or {}
    messages = []
    for m in request.get("messages") or []:
        # a stored request keeps each message as [role, content]
        role, content = (m.get("role"), m.get("content")) if isinstance(m, dict) else m[:2]
        messages.append({"role": str(role), "content": _cut(content, 8_000)})
    return {
        "digest": call.get("digest"),
        "messages": messages,
        "text": _cut(completion.get("text"), 8_000),
        "usage": completion.get("usage") or {},
    }


def run_view(doc: dict[str, Any], *, with_calls: bool = False) -> dict[str, Any]:
    """The page's data for an export document (see `viewer.export.export_doc`)."""
    events: list[dict[str, Any]] = doc.get("events") or []
    view: dict[str, Any] = {
        "run": doc["run"],
        "nodes": nodes_view(doc.get("state")),
        "goal": (doc.get("state") or {}).get("goal"),
        "best": (doc.get("state") or {}).get("best"),
        "events": events[-MAX_EVENTS:],
        "hidden_events": max(0, len(events) - MAX_EVENTS),
        "last_seq": events[-1].get("seq", -1) if events else -1,
    }
    if with_calls:
        view["calls"] = [call_view(c) for c in (doc.get("calls") or [])[:MAX_CALLS]]
    return view
