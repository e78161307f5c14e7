"""SearchResult: how a search ended, the winning (or best failed) path, and its cost."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

from guardsearch.core.context import Context
from guardsearch.core.events import Trace
from guardsearch.core.outcome import Outcome
from guardsearch.core.steering import Steering
from guardsearch.jsonl import json_line
from guardsearch.search.node import Node, SearchTree
from guardsearch.search.serialize import context_to_dict
from guardsearch.search.space import SearchSpace
from guardsearch.search.state import SearchState, Termination


@dataclass(frozen=True, kw_only=True)
class SearchResult(Outcome):
    """The outcome of `search()`; its `stop_reason` is its `Termination`.

    `path` runs from the root to the goal when `succeeded`, else to the best failed
    node (lowest h, then deepest). `context` is the context of the path's last node:
    only the winning path's context is the result's context (node isolation).
    """

    strategy: str
    path: tuple[Node, ...]
    answer: Any
    context: Context
    expansions: int
    tree: SearchTree
    state: SearchState

    @property
    def termination(self) -> Termination:
        """Why the search ended (`stop_reason`; the name the search docs use)."""
        return cast("Termination", self.stop_reason)

    @property
    def calls(self) -> int:
        return self.usage.calls

    @property
    def tokens(self) -> int:
        return self.usage.total_tokens

    @property
    def steps(self) -> list[str]:
        """The path as the texts of its nodes, root excluded: every move of the winning
        path (or of the best failed one), not only the last (that is `answer`'s job
        in a space whose answer is one node's output)."""
        return [n.text for n in self.path[1:]]

    @property
    def pruned(self) -> dict[str, list[str]]:
        """Why candidates were cut, by the guard whose verdict cut them: guard name ->
        `"text: feedback"` of each failed node, in creation order. `parse` holds the
        unreadable answers, `terminal` the dead ends (a last state that is no goal),
        `width` the passing nodes a beam or A* width dropped. Duplicates are not nodes
        (the trace's `candidate_dropped` events count them). What an `all_pruned`
        search ran into, in one look."""
        out: dict[str, list[str]] = {}
        for node in self.tree:
            if node.parent is None or node.viable or node.verdict is None:
                continue
            if node.status == "pruned" and node.verdict.passed:
                out.setdefault("width", []).append(node.text)
                continue
            name = node.verdict.guard or "guard"
            out.setdefault(name, []).append(f"{node.text}: {node.verdict.feedback}")
        return out

    @property
    def last(self) -> Node:
        return self.path[-1]

    @property
    def score(self) -> float | None:
        return self.last.score

    @property
    def steering(self) -> Steering:
        """How feedback steered the search: outputs (candidates judged or dropped),
        repeats of an earlier output at the same node, repairs accepted without a model
        call, and failures prevented by guard constraints (counted across resumes)."""
        return Steering.from_dict(self.state.steering)

    def details(self) -> dict[str, Any]:
        """The search's part of `as_dict` (the CLI's --json and the HTTP API use it)."""
        return {
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
            **({} if self.succeeded else {"pruned": self.pruned}),
        }

    def summary(self) -> dict[str, Any]:
        """The result as plain JSON, as a durable run records it and `/solve` answers:
        the path as texts, the answer as JSON, and the winning path's context (node
        isolation: only that context is merged back)."""
        answer = json.loads(json_line(self.answer)) if self.answer is not None else None
        return {
            "succeeded": self.succeeded,
            "termination": self.termination,
            "answer": answer,
            "path": [n.text for n in self.path[1:]],
            "calls": self.calls,
            "tokens": self.tokens,
            "expansions": self.expansions,
            "nodes": len(self.tree),
            "steering": self.steering.as_dict(),
            "context": context_to_dict(self.last.context),
        }


def result_of(
    state: SearchState,
    space: SearchSpace,
    *,
    run_id: str = "",
    seconds: float = 0.0,
    trace: Trace | None = None,
) -> SearchResult:
    """The result a search's final (or saved) state stands for: the goal's path when it
    succeeded, else the best failed node's (`SearchState.ending`). A state still under
    way has no stop reason yet ("")."""
    tree = state.tree
    succeeded, last = state.ending()
    return SearchResult(
        succeeded=succeeded,
        stop_reason=state.termination or "",
        run_id=run_id,
        seconds=seconds,
        strategy=state.strategy,
        path=tuple(tree.path(last.id)),
        answer=space.answer(last) if succeeded else None,
        context=last.context,
        usage=state.usage,
        expansions=state.expansions,
        tree=tree,
        trace=trace if trace is not None else Trace(),
        state=state,
    )
