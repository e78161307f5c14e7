"""SearchState: everything a search needs to resume, as plain data.

The tree (nodes by id), the closed set (state key -> first node with that key), the
strategy's frontier and counters (`data`, small plain JSON, plus `tables` for the
collections that grow with the tree), counters and usage. A store saves it after
every expansion (`on_expansion`), either whole (`to_dict`) or incrementally
(`changed` node ids, the rows each table changed, and the small rest), and
`search(..., resume=state)` continues from it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
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


class Table:
    """A strategy collection that grows with the tree, saved as rows: key -> JSON value.

    `SearchState.data` is written whole at every checkpoint, so it must stay small. A
    collection as big as the tree (A*'s open set, a BFS level) lives in a Table
    instead, and a checkpoint writes only the keys put or deleted since the last one
    (a `clear()` is one delete). Keys iterate in insertion order (an update keeps a
    key's place), in memory and after a reload alike. `cache` is for a strategy's
    in-memory index over the rows (A*'s heap): never saved, rebuilt after a load.
    """

    def __init__(self, rows: Iterable[tuple[str, Any]] = ()) -> None:
        self._rows: dict[str, Any] = {}
        self._pos: dict[str, int] = {}  # each key's place in the saved order
        self._next = 0
        self._dirty: set[str] = set()  # keys put or deleted since the last save
        self._reset = True  # the saved rows (if any) are to be replaced whole
        self.cache: Any = None
        for key, value in rows:
            self.put(key, value)

    @classmethod
    def loaded(cls, rows: Iterable[tuple[str, int, Any]]) -> Table:
        """A table as a store saved it: (key, position, value) rows, in position order."""
        table = cls()
        for key, pos, value in rows:
            table._rows[key] = value
            table._pos[key] = pos
            table._next = max(table._next, pos + 1)
        table._reset = False
        return table

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Table) and list(self.items()) == list(other.items())

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Table({len(self)} rows)"

    def keys(self) -> list[str]:
        return list(self._rows)

    def items(self) -> Iterator[tuple[str, Any]]:
        return iter(self._rows.items())

    def get(self, key: str, default: Any = None) -> Any:
        return self._rows.get(key, default)

    def put(self, key: str, value: Any) -> None:
        """Insert `key` (at the end) or replace its value (in its place)."""
        if key not in self._rows:
            self._pos[key] = self._next
            self._next += 1
        self._rows[key] = value
        self._dirty.add(key)

    def delete(self, key: str) -> None:
        del self._rows[key]
        del self._pos[key]
        self._dirty.add(key)

    def clear(self) -> None:
        self._rows.clear()
        self._pos.clear()
        self._dirty.clear()
        self._reset = True

    def to_list(self) -> list[list[Any]]:
        return [[key, value] for key, value in self._rows.items()]

    # -- what a store needs ---------------------------------------------------------------

    @property
    def reset(self) -> bool:
        """True when the saved rows must be dropped before `changes()` are written."""
        return self._reset

    def changes(self) -> tuple[list[tuple[str, int, Any]], list[str]]:
        """Rows to write (key, position, value) and keys to delete since the last save."""
        if self._reset:
            return [(k, self._pos[k], v) for k, v in self._rows.items()], []
        puts: list[tuple[str, int, Any]] = []
        deletes: list[str] = []
        for key in self._dirty:
            if key in self._rows:
                puts.append((key, self._pos[key], self._rows[key]))
            else:
                deletes.append(key)
        puts.sort(key=lambda row: row[1])
        deletes.sort()
        return puts, deletes

    def mark_saved(self) -> None:
        self._dirty.clear()
        self._reset = False


@dataclass(kw_only=True)
class SearchState:
    """The resumable state of one search."""

    strategy: str
    tree: SearchTree
    closed: dict[str, str] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, Table] = field(default_factory=dict)
    expansions: int = 0
    usage: Usage = ZERO
    termination: Termination | None = None
    goal: str | None = None
    best: str | None = None
    # How feedback steered (core/steering.py): outputs, repeats, repairs, prevented.
    steering: dict[str, int] = field(default_factory=dict)
    changed: set[str] = field(default_factory=set)
    # The node whose expansion is under way (None between expansions): a pause or a
    # crash in the middle of an expansion names it. Not saved.
    expanding: str | None = field(default=None, compare=False)
    # A step that made progress worth keeping without expanding (the program strategy's
    # accepted code) asks the driver for a checkpoint after it. Not saved.
    checkpoint_due: bool = field(default=False, compare=False)

    def ending(self) -> tuple[bool, Node]:
        """Whether the search succeeded, and the node its result ends at: the goal, else
        the best failed node (`best`, else the tree's lowest h, then deepest)."""
        if self.termination == "success" and self.goal is not None:
            return True, self.tree[self.goal]
        return False, self.tree[self.best] if self.best is not None else self.tree.best()

    def touch(self, node: Node | str) -> None:
        """Mark a node as changed since the last checkpoint."""
        self.changed.add(node if isinstance(node, str) else node.id)

    def mark_saved(self) -> None:
        """A checkpoint holds everything so far: forget what changed."""
        self.changed.clear()
        self.checkpoint_due = False
        for table in self.tables.values():
            table.mark_saved()

    def frontier_dict(self) -> dict[str, Any]:
        """Everything but the nodes (a store saves the tables' changed rows on their own)."""
        return {
            "version": FORMAT_VERSION,
            "strategy": self.strategy,
            "closed": dict(self.closed),
            "data": copy.deepcopy(self.data),
            "tables": {name: copy.deepcopy(t.to_list()) for name, t in sorted(self.tables.items())},
            "expansions": self.expansions,
            "usage": self.usage.as_dict(),
            "termination": self.termination,
            "goal": self.goal,
            "best": self.best,
            "root": self.tree.root_id,
            "steering": dict(self.steering),
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
            tables={
                name: Table((str(k), v) for k, v in rows)
                for name, rows in d.get("tables", {}).items()
            },
            expansions=int(d.get("expansions", 0)),
            usage=Usage(**usage),
            termination=d.get("termination"),
            goal=d.get("goal"),
            best=d.get("best"),
            steering={str(k): int(v) for k, v in (d.get("steering") or {}).items()},
        )
