"""Reading a list of finished spans as a tree (tests)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class SpanTree:
    """Finished spans by id, with their children in start order."""

    def __init__(self, spans: Sequence[Any]) -> None:
        self.spans = list(spans)
        self.by_id = {s.context.span_id: s for s in self.spans}

    def roots(self) -> list[Any]:
        return [s for s in self.spans if s.parent is None or s.parent.span_id not in self.by_id]

    def parent(self, span: Any) -> Any:
        return self.by_id.get(span.parent.span_id) if span.parent is not None else None

    def children(self, span: Any, prefix: str = "") -> list[Any]:
        kids = [
            s
            for s in self.spans
            if s.parent is not None
            and s.parent.span_id == span.context.span_id
            and s.name.startswith(prefix)
        ]
        return sorted(kids, key=lambda s: s.start_time)

    def named(self, prefix: str) -> list[Any]:
        return [s for s in self.spans if s.name.startswith(prefix)]

    def outline(self, span: Any | None = None, depth: int = 0) -> list[str]:
        """`name` lines indented by depth (what a trace viewer shows)."""
        if span is None:
            return [line for root in self.roots() for line in self.outline(root, 0)]
        lines = ["  " * depth + span.name]
        for child in self.children(span):
            lines.extend(self.outline(child, depth + 1))
        return lines
