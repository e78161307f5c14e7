"""SearchState <-> store rows: incremental saves of what changed, and the way back.

After each expansion only the nodes in `state.changed` are written (plus the frontier
and the closed-set entries of new nodes); contexts are content-addressed by digest,
so siblings sharing a context cost one row. `restore()` rebuilds the dict that
`SearchState.from_dict` reads.
"""

from __future__ import annotations

from typing import Any

from guardsearch.core.context import Context
from guardsearch.core.digest import stable_digest
from guardsearch.search.serialize import context_to_dict, node_to_dict
from guardsearch.search.state import FORMAT_VERSION, SearchState
from guardsearch.store.base import CheckpointRows, SavedTree


def node_seq(ident: str) -> int:
    """Creation order of a node id "n<int>" (parents are always created first)."""
    return int(ident[1:]) if ident[1:].isdigit() else 0


class Checkpointer:
    """Turns a SearchState's changes into CheckpointRows, remembering written contexts."""

    def __init__(self) -> None:
        # id(context) -> (context kept alive so the id stays unique, its digest)
        self._digests: dict[int, tuple[Context, str]] = {}
        self._written: set[str] = set()

    def digest(self, ctx: Context) -> tuple[str, dict[str, Any] | None]:
        """The context's digest, and its data if it was not written yet."""
        known = self._digests.get(id(ctx))
        if known is not None and known[0] is ctx:
            digest = known[1]
            return digest, None if digest in self._written else context_to_dict(ctx)
        data = context_to_dict(ctx)
        digest = stable_digest(data)
        self._digests[id(ctx)] = (ctx, digest)
        return digest, None if digest in self._written else data

    def rows(self, state: SearchState) -> CheckpointRows:
        # SearchState.frontier_dict() without its copies: the closed set is saved per
        # node below (never rewritten whole), and `data` is serialised at once.
        frontier = {
            "version": FORMAT_VERSION,
            "strategy": state.strategy,
            "data": state.data,
            "expansions": state.expansions,
            "usage": state.usage.as_dict(),
            "termination": state.termination,
            "goal": state.goal,
            "best": state.best,
            "root": state.tree.root_id,
        }
        rows = CheckpointRows(
            frontier=frontier,
            usage=state.usage.as_dict(),
            expansions=state.expansions,
            node_count=len(state.tree),
        )
        for ident in sorted(state.changed, key=node_seq):
            node = state.tree[ident]
            digest, data = self.digest(node.context)
            if data is not None:
                rows.contexts.append((digest, data))
            record = node_to_dict(node, 0)
            record["context"] = digest
            rows.nodes.append((node_seq(ident), ident, record))
            owner = state.closed.get(node.key)
            if owner is not None:
                rows.closed.append((node.key, owner))
        return rows

    def written(self, rows: CheckpointRows) -> None:
        """Call after the rows are committed: their contexts need not be sent again."""
        self._written.update(d for d, _ in rows.contexts)


def restore(saved: SavedTree) -> dict[str, Any]:
    """The `SearchState.to_dict()` form of a saved tree."""
    index: dict[str, int] = {}
    contexts: list[dict[str, Any]] = []
    nodes: list[dict[str, Any]] = []
    for raw in saved.nodes:
        digest = raw["context"]
        if digest not in index:
            index[digest] = len(contexts)
            contexts.append(saved.contexts[digest])
        nodes.append({**raw, "context": index[digest]})
    return {**saved.frontier, "closed": dict(saved.closed), "contexts": contexts, "nodes": nodes}


def load_state(saved: SavedTree | None) -> SearchState | None:
    return None if saved is None else SearchState.from_dict(restore(saved))
