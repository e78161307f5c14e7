"""SearchResult: how a search ended, the winning (or best failed) path, and its cost."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from guardsearch.core.context import Context
from guardsearch.core.events import Trace
from guardsearch.core.usage import Usage
from guardsearch.search.node import Node, SearchTree
from guardsearch.search.state import SearchState, Termination


@dataclass(frozen=True, kw_only=True)
class SearchResult:
    """The outcome of `search()`.

    `path` runs from the root to the goal when `succeeded`, else to the best failed
    node (lowest h, then deepest). `context` is the context of the path's last node:
    only the winning path's context is the result's context (node isolation).
    """

    succeeded: bool
    termination: Termination
    strategy: str
    path: tuple[Node, ...]
    answer: Any
    context: Context
    usage: Usage
    expansions: int
    tree: SearchTree
    trace: Trace
    state: SearchState

    @property
    def calls(self) -> int:
        return self.usage.calls

    @property
    def tokens(self) -> int:
        return self.usage.total_tokens

    @property
    def last(self) -> Node:
        return self.path[-1]

    @property
    def score(self) -> float | None:
        return self.last.score

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (the CLI's --json and the HTTP API use it)."""
        return {
            "succeeded": self.succeeded,
            "termination": self.termination,
            "strategy": self.strategy,
            "answer": self.answer,
            "calls": self.calls,
            "tokens": self.tokens,
            "expansions": self.expansions,
            "nodes": len(self.tree),
            "path": [
                {
                    "id": n.id,
                    "step": n.step,
                    "text": n.text,
                    "score": n.score,
                    "feedback": n.verdict.feedback if n.verdict else "",
                }
                for n in self.path[1:]
            ],
            "usage": self.usage.as_dict(),
        }
