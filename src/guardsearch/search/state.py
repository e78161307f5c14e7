"""SearchState: everything a search needs to resume, as plain data.

The tree (nodes by id), the closed set (state key -> first node with that key), the
strategy's frontier and counters (`data`, plain JSON), counters and usage. A store
saves it after every expansion (`on_expansion`), either whole (`to_dict`) or
incrementally (`changed` node ids + `frontier_dict`), and `search(..., resume=state)`
continues from it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal

from guardsearch.core.context import Context
from guardsearch.core.usage import ZERO, Usage
from guardsearch.search.node import Node, SearchTree
from guardsearch.search.serialize import (
    context_from_dict,
    context_to_dict,
    node_from_dict,
    node_to_dict,
)

Termination = Literal["success", "budget_exhausted", "all_pruned", "backtrack_ceiling", "cancelled"]
TERMINATIONS: tuple[Termination, ...] = (
    "success",
    "budget_exhausted",
    "all_pruned",
    "backtrack_ceiling",
    "cancelled",
)
FORMAT_VERSION = 1


@dataclass(kw_only=True)
class SearchState:
    """The resumable state of one search."""

    strategy: str
    tree: SearchTree
    closed: dict[str, str] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    expansions: int = 0
    usage: Usage = ZERO
    termination: Termination | None = None
    goal: str | None = None
    best: str | None = None
    changed: set[str] = field(default_factory=set)

    def touch(self, node: Node | str) -> None:
        """Mark a node as changed since the last checkpoint."""
        self.changed.add(node if isinstance(node, str) else node.id)

    def frontier_dict(self) -> dict[str, Any]:
        """Everything but the nodes: small, saved after every expansion."""
        return {
            "version": FORMAT_VERSION,
            "strategy": self.strategy,
            "closed": dict(self.closed),
            "data": copy.deepcopy(self.data),
            "expansions": self.expansions,
            "usage": self.usage.as_dict(),
            "termination": self.termination,
            "goal": self.goal,
            "best": self.best,
            "root": self.tree.root_id,
        }

    def to_dict(self) -> dict[str, Any]:
        """The whole state as JSON-ready data (contexts shared by several nodes once)."""
        refs: dict[int, int] = {}
        contexts: list[dict[str, Any]] = []
        nodes = []
        for node in self.tree:
            ref = refs.get(id(node.context))
            if ref is None:
                ref = refs[id(node.context)] = len(contexts)
                contexts.append(context_to_dict(node.context))
            nodes.append(node_to_dict(node, ref))
        return {**self.frontier_dict(), "contexts": contexts, "nodes": nodes}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SearchState:
        contexts: list[Context] = [context_from_dict(c) for c in d["contexts"]]
        tree = SearchTree()
        for raw in d["nodes"]:
            tree.add(node_from_dict(raw, contexts))
        usage = {k: v for k, v in d.get("usage", {}).items() if k != "total_tokens"}
        return cls(
            strategy=d["strategy"],
            tree=tree,
            closed=dict(d.get("closed", {})),
            data=d.get("data", {}),
            expansions=int(d.get("expansions", 0)),
            usage=Usage(**usage),
            termination=d.get("termination"),
            goal=d.get("goal"),
            best=d.get("best"),
        )
