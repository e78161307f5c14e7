"""Nodes and the search tree: plain records linked by ids, not by object references.

Every generated candidate is a `Node`: its state, the text the model wrote, its
verdict, g (cost so far), h (1 - score; infinity when a hard check failed), its own
Context, and a status. The tree is a dict of nodes by id, so a frontier is a list of
ids and the whole tree serialises to JSON (see `search/serialize.py`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.guard_result import GuardResult

NodeStatus = Literal["root", "open", "expanded", "failed", "goal", "pruned"]

INF = math.inf


@dataclass(slots=True, kw_only=True)
class Node:
    """One candidate in the tree.

    `context` is the context this node's children are generated from; it starts as
    the parent's context plus this node's output (`SearchSpace.child_context`) and is
    replaced (never mutated) when a backtrack amends it with a failure summary.
    `feedback` is the retry channel for this node's next expansion.
    """

    id: str
    parent: str | None
    depth: int
    state: Any
    key: str
    context: Context
    step: str = ""
    text: str = ""
    value: Any = None
    parse_error: str | None = None
    verdict: GuardResult | None = None
    g: float = 0.0
    h: float = 0.0
    status: NodeStatus = "open"
    seed: int | None = None
    attempt: int = 1
    feedback: list[str] = field(default_factory=list)
    expansions: int = 0
    # Proposals for this node's children that repeated an earlier candidate (dropped).
    repeats: int = 0
    children: list[str] = field(default_factory=list)

    @property
    def score(self) -> float | None:
        return None if self.verdict is None else self.verdict.score

    @property
    def viable(self) -> bool:
        """Passed its guard and may be built on (or is a goal)."""
        return self.status in ("open", "expanded", "goal", "root")

    @property
    def pruned(self) -> bool:
        return math.isinf(self.h)

    def artifact(self) -> Artifact:
        """This node's output as an Artifact (what guards judge)."""
        return Artifact(
            id=self.id,
            step=self.step,
            text=self.text,
            value=self.value,
            attempt=self.attempt,
            parent_id=self.parent,
            parse_error=self.parse_error,
        )

    def preview(self, limit: int = 200) -> str:
        """The node's text cut to `limit` characters (failure summaries show previews of <= 200)."""
        text = self.text.strip()
        return text if len(text) <= limit else text[:limit] + "..."


class SearchTree:
    """All nodes of one search by id, with ids handed out in creation order."""

    def __init__(self, root: Node | None = None) -> None:
        self.nodes: dict[str, Node] = {}
        self.root_id = ""
        self._next = 0
        if root is not None:
            self.add(root)

    def new_id(self) -> str:
        ident = f"n{self._next}"
        self._next += 1
        return ident

    def add(self, node: Node) -> Node:
        if node.id in self.nodes:
            raise ValueError(f"duplicate node id {node.id}")
        self.nodes[node.id] = node
        if node.parent is None:
            self.root_id = node.id
        else:
            self.nodes[node.parent].children.append(node.id)
        # Ids are "n<int>"; keep the counter ahead of any id we are given (resume).
        if node.id.startswith("n") and node.id[1:].isdigit():
            self._next = max(self._next, int(node.id[1:]) + 1)
        return node

    @property
    def root(self) -> Node:
        return self.nodes[self.root_id]

    def __getitem__(self, ident: str) -> Node:
        return self.nodes[ident]

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes.values())

    def children(self, ident: str) -> list[Node]:
        return [self.nodes[c] for c in self.nodes[ident].children]

    def path(self, ident: str) -> list[Node]:
        """Root-to-node path."""
        out: list[Node] = []
        current: str | None = ident
        while current is not None:
            node = self.nodes[current]
            out.append(node)
            current = node.parent
        out.reverse()
        return out

    def best(self) -> Node:
        """The most promising node: lowest h, then deepest, then earliest."""
        candidates = [n for n in self.nodes.values() if n.parent is not None]
        if not candidates:
            return self.root

        def order(n: Node) -> tuple[float, int, int]:
            return (n.h, -n.depth, _seq(n.id))

        return min(candidates, key=order)


def _seq(ident: str) -> int:
    return int(ident[1:]) if ident[1:].isdigit() else 0
