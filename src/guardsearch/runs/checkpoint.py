"""SearchState <-> store rows: incremental saves of what changed, and the way back.

After each expansion only the nodes in `state.changed` are written, with the
closed-set entries of new nodes, the rows each strategy table (`state.tables`: A*'s
open set, a BFS level) changed, and the strategy's small `data`; contexts are
content-addressed by digest, so siblings sharing a context cost one row. Nothing is
rewritten whole, so a save costs what the expansion changed, not the size of the tree.
`restore()` rebuilds the dict that `SearchState.from_dict` reads.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from guardsearch.core.context import Context
from guardsearch.search.serialize import context_to_dict, node_to_dict
from guardsearch.search.state import FORMAT_VERSION, SearchState, Table
from guardsearch.store.base import CheckpointRows, SavedTree


def node_seq(ident: str) -> int:
    """Creation order of a node id "n<int>" (parents are always created first)."""
    return int(ident[1:]) if ident[1:].isdigit() else 0


def context_digest(data: dict[str, Any]) -> str:
    """sha256 of a context row (sorted-key JSON; the C encoder, as a save runs often)."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def context_delta(data: dict[str, Any], base: dict[str, Any], base_digest: str) -> dict[str, Any]:
    """`data` as a change of `base`: the fields that differ, lists that grew as their tail.

    A child's context is its parent's plus one more result, so it is written as a few
    bytes instead of its whole (growing) path.
    """
    changed: dict[str, Any] = {}
    grown: dict[str, Any] = {}
    for key, value in data.items():
        old = base.get(key)
        if value == old:
            continue
        if (
            isinstance(value, list)
            and isinstance(old, list)
            and len(value) > len(old)
            and value[: len(old)] == old
        ):
            grown[key] = value[len(old) :]
        else:
            changed[key] = value
    delta: dict[str, Any] = {"base": base_digest}
    if changed:
        delta["set"] = changed
    if grown:
        delta["extend"] = grown
    return delta


def resolve_contexts(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Whole contexts from saved rows, some of them deltas of others (`context_delta`)."""
    done: dict[str, dict[str, Any]] = {}
    for digest in rows:
        chain: list[str] = []
        at = digest
        while at not in done:
            raw = rows[at]
            if "base" not in raw:
                done[at] = raw
                break
            chain.append(at)
            at = raw["base"]
        for ident in reversed(chain):
            raw = rows[ident]
            base = done[raw["base"]]
            whole = {**base, **raw.get("set", {})}
            for key, tail in raw.get("extend", {}).items():
                whole[key] = [*base[key], *tail]
            done[ident] = whole
    return done


class Checkpointer:
    """Turns a SearchState's changes into CheckpointRows, remembering written contexts.

    A node's context is written once, as a delta of its parent's context when that one
    is saved already (see `context_delta`), keyed by the digest of what is written.
    """

    def __init__(self) -> None:
        # id(context) -> (context kept alive so the id stays unique, its digest)
        self._digests: dict[int, tuple[Context, str]] = {}
        self._written: set[str] = set()
        self._base: tuple[Context, dict[str, Any]] | None = None  # last base, as data
        self._last: dict[str, Context] = {}  # node id -> the context it was saved with

    def adopt(self, saved: SavedTree, state: SearchState) -> None:
        """The contexts of a state loaded from `saved` are in the store already."""
        for raw in saved.nodes:
            node = state.tree.nodes.get(raw["id"])
            if node is not None:
                self._digests[id(node.context)] = (node.context, raw["context"])
                self._written.add(raw["context"])
                self._last[node.id] = node.context

    def _known(self, ctx: Context) -> str | None:
        known = self._digests.get(id(ctx))
        return known[1] if known is not None and known[0] is ctx else None

    def _as_data(self, ctx: Context) -> dict[str, Any]:
        if self._base is not None and self._base[0] is ctx:
            return self._base[1]
        data = context_to_dict(ctx)
        self._base = (ctx, data)
        return data

    def digest(
        self, ctx: Context, base: Context | None = None, batch: set[str] | None = None
    ) -> tuple[str, dict[str, Any] | None]:
        """The context's digest, and the row to write if it is not saved yet.

        `base` (the parent node's context) is used when it is saved already or in
        `batch`, the digests written by the same checkpoint.
        """
        pending = batch if batch is not None else set()
        digest = self._known(ctx)
        if digest is not None and (digest in self._written or digest in pending):
            return digest, None
        data = context_to_dict(ctx)
        base_digest = self._known(base) if base is not None and base is not ctx else None
        if (
            base is not None
            and base_digest is not None
            and (base_digest in self._written or base_digest in pending)
        ):
            data = context_delta(data, self._as_data(base), base_digest)
        digest = context_digest(data)
        self._digests[id(ctx)] = (ctx, digest)
        if digest in self._written or digest in pending:
            return digest, None
        pending.add(digest)
        return digest, data

    def rows(self, state: SearchState) -> CheckpointRows:
        # SearchState.frontier_dict() without its copies: the closed set is saved per
        # node below and each table by its changed rows (never rewritten whole), and
        # `data` (small) is serialised at once.
        usage = state.usage.as_dict()
        frontier = {
            "version": FORMAT_VERSION,
            "strategy": state.strategy,
            "data": state.data,
            "tables": sorted(state.tables),
            "expansions": state.expansions,
            "usage": usage,
            "termination": state.termination,
            "goal": state.goal,
            "best": state.best,
            "root": state.tree.root_id,
            "steering": dict(state.steering),
        }
        rows = CheckpointRows(
            frontier=frontier,
            usage=usage,
            expansions=state.expansions,
            node_count=len(state.tree),
        )
        batch: set[str] = set()
        for ident in sorted(state.changed, key=node_seq):
            node = state.tree[ident]
            # A node's new context (an amendment) builds on its old one; a new node's
            # on its parent's.
            base = self._last.get(ident)
            if base is None and node.parent is not None and node.parent in state.tree.nodes:
                base = state.tree[node.parent].context
            digest, data = self.digest(node.context, base, batch)
            self._last[ident] = node.context
            if data is not None:
                rows.contexts.append((digest, data))
            record = node_to_dict(node, 0)
            record["context"] = digest
            rows.nodes.append((node_seq(ident), ident, record))
            owner = state.closed.get(node.key)
            if owner is not None:
                rows.closed.append((node.key, owner))
        for name, table in sorted(state.tables.items()):
            if table.reset:
                rows.table_resets.append(name)
            puts, deletes = table.changes()
            rows.table_rows.extend((name, key, pos, value) for key, pos, value in puts)
            rows.table_deletes.extend((name, key) for key in deletes)
        return rows

    def written(self, rows: CheckpointRows) -> None:
        """Call after the rows are committed: their contexts need not be sent again."""
        self._written.update(d for d, _ in rows.contexts)


def restore(saved: SavedTree) -> dict[str, Any]:
    """The `SearchState.to_dict()` form of a saved tree.

    A tree rebuilt from a trace (a bench trial's, experiments/runlog.py) has no
    contexts: its nodes keep no `context`, which is enough to show and export it (it
    is never resumed).
    """
    index: dict[str, int] = {}
    contexts: list[dict[str, Any]] = []
    nodes: list[dict[str, Any]] = []
    whole = resolve_contexts(saved.contexts)
    for raw in saved.nodes:
        digest = raw.get("context")
        if digest is None:
            nodes.append(dict(raw))
            continue
        if digest not in index:
            index[digest] = len(contexts)
            contexts.append(whole[digest])
        nodes.append({**raw, "context": index[digest]})
    tables = {
        name: [[key, value] for key, _, value in saved.tables.get(name, [])]
        for name in saved.frontier.get("tables", [])
    }
    return {
        **saved.frontier,
        "tables": tables,
        "closed": dict(saved.closed),
        "contexts": contexts,
        "nodes": nodes,
    }


def load_state(saved: SavedTree | None) -> SearchState | None:
    """The saved state, its tables marked as in step with the store (no rewrite)."""
    if saved is None:
        return None
    state = SearchState.from_dict(restore(saved))
    for name in state.tables:
        state.tables[name] = Table.loaded(saved.tables.get(name, []))
    return state
