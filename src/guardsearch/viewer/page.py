"""Render a run (the `guardsearch runs export` document) as one HTML page.

The page needs no server and no scripts: the search tree is nested `<details>`
elements, the winning path is highlighted, and every event is a table row. It reads
only what the store already keeps, so any run can be viewed, finished or not.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import jinja2

MAX_EVENT_ROWS = 5_000
PREVIEW_CHARS = 240


@dataclass
class ViewNode:
    """A node as the page shows it."""

    id: str
    step: str
    status: str
    text: str
    depth: int
    g: float | None
    h: float | None
    score: float | None
    passed: bool | None
    feedback: str
    guard: str
    on_path: bool
    children: list[ViewNode] = field(default_factory=list)


def _num(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def _winning_path(nodes: dict[str, dict[str, Any]]) -> set[str]:
    goals = [n for n in nodes.values() if n.get("status") == "goal"]
    path: set[str] = set()
    if goals:
        current: dict[str, Any] | None = goals[0]
        while current is not None and current["id"] not in path:  # an export may loop
            path.add(current["id"])
            parent = current.get("parent")
            current = nodes.get(parent) if parent else None
    return path


def build_tree(state: dict[str, Any] | None) -> tuple[list[ViewNode], Counter[str]]:
    """The saved tree as ViewNodes (roots first) and a count of nodes per status."""
    raw = {n["id"]: n for n in (state or {}).get("nodes", [])}
    on_path = _winning_path(raw)
    views: dict[str, ViewNode] = {}
    for node in raw.values():
        verdict = node.get("verdict") if isinstance(node.get("verdict"), dict) else {}
        text = str(node.get("text") or "")
        views[node["id"]] = ViewNode(
            id=node["id"],
            step=node.get("step") or "",
            status=node.get("status") or "",
            text=text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + "…",
            depth=int(node.get("depth", 0)),
            g=_num(node.get("g")),
            h=_num(node.get("h")),
            score=_num(verdict.get("score")),
            passed=verdict.get("passed"),
            feedback=verdict.get("feedback") or node.get("parse_error") or "",
            guard=verdict.get("guard") or "",
            on_path=node["id"] in on_path,
        )
    roots: list[ViewNode] = []
    for node in raw.values():
        view = views[node["id"]]
        parent = node.get("parent")
        if parent in views:
            views[parent].children.append(view)
        else:
            roots.append(view)
    return roots, Counter(v.status for v in views.values())


def _event_rows(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    start = events[0].get("at", 0.0) if events else 0.0
    rows = []
    for event in events[:MAX_EVENT_ROWS]:
        data = event.get("data") or {}
        rows.append(
            {
                "seq": event.get("seq", ""),
                "t": f"{float(event.get('at', start)) - float(start):.3f}",
                "kind": event.get("kind", ""),
                "step": event.get("step") or "",
                "node": event.get("node") or "",
                "data": json.dumps(data, ensure_ascii=False, default=str)[:400],
            }
        )
    return rows


# What the page shows of a run when an export leaves a field out.
RUN_FIELDS: dict[str, Any] = {
    "id": "",
    "name": "",
    "status": "",
    "app": "",
    "strategy": "",
    "termination": None,
    "calls": 0,
    "tokens": 0,
    "created_at": "",
    "updated_at": "",
}


def check_export(doc: Any) -> None:
    """A ValueError unless `doc` has the shape of a `runs export` document (an export
    file may come from anywhere: the page must not fail half-way on a wrong type)."""
    if not isinstance(doc, dict):
        raise ValueError("not a run export: not a JSON object")
    for key in ("run", "state", "events"):
        if key not in doc:
            raise ValueError(f"not a run export: the {key!r} field is missing")
    if not isinstance(doc["run"], dict):
        raise ValueError("not a run export: 'run' is not an object")
    state = doc["state"]
    nodes = state.get("nodes", []) if isinstance(state, dict) else None
    if state is not None and not (
        isinstance(nodes, list)
        and all(isinstance(n, dict) and isinstance(n.get("id"), str) for n in nodes)
    ):
        raise ValueError("not a run export: 'state' must hold a list of nodes with ids")
    if not isinstance(doc["events"], list) or not all(isinstance(e, dict) for e in doc["events"]):
        raise ValueError("not a run export: 'events' must be a list of objects")
    if not isinstance(doc.get("calls") or [], list):
        raise ValueError("not a run export: 'calls' must be a list")


def render_run(doc: dict[str, Any]) -> str:
    """The HTML page for one exported run: `{"run", "state", "events", "calls"}`."""
    check_export(doc)
    roots, statuses = build_tree(doc["state"])
    events: list[dict[str, Any]] = doc["events"]
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(
            lambda name: resources.files("guardsearch.viewer").joinpath(name).read_text("utf-8")
        ),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    return env.get_template("page.html.j2").render(
        run={**RUN_FIELDS, **doc["run"]},
        roots=roots,
        statuses=sorted(statuses.items()),
        kinds=sorted(Counter(e.get("kind", "") for e in events).items()),
        events=_event_rows(events),
        hidden_events=max(0, len(events) - MAX_EVENT_ROWS),
        paid_calls=len(doc.get("calls") or []),
    )
