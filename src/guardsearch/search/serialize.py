"""Plain-data forms of nodes, contexts and verdicts, so a frontier can be saved as JSON.

Infinity (a pruned node's h) is written as the string "inf"; everything else is
ordinary JSON. A round trip gives equal values.
"""

from __future__ import annotations

import math
from typing import Any

from guardsearch.core.context import Context
from guardsearch.core.guard_result import Check, GuardResult
from guardsearch.search.node import Node


def _num(x: float) -> float | str:
    return "inf" if math.isinf(x) else x


def _unnum(x: float | str) -> float:
    return math.inf if x == "inf" else float(x)


def context_to_dict(ctx: Context) -> dict[str, Any]:
    return {
        "objective": ctx.objective,
        "artifacts": [list(a) for a in ctx.artifacts],
        "constraints": list(ctx.constraints),
        "feedback": list(ctx.feedback),
        "failures": list(ctx.failures),
        "older_failures": ctx.older_failures,
        "dropped_failures": ctx.dropped_failures,
        "window": ctx.window,
        "inputs": [list(i) for i in ctx.inputs],
        "tried": [list(t) for t in ctx.tried],
    }


def context_from_dict(d: dict[str, Any]) -> Context:
    return Context(
        objective=d["objective"],
        artifacts=tuple((str(a), str(b)) for a, b in d.get("artifacts", [])),
        constraints=tuple(d.get("constraints", [])),
        feedback=tuple(d.get("feedback", [])),
        failures=tuple(d.get("failures", [])),
        older_failures=d.get("older_failures", ""),
        dropped_failures=int(d.get("dropped_failures", 0)),
        window=int(d.get("window", 3)),
        inputs=tuple((str(a), str(b)) for a, b in d.get("inputs", [])),
        tried=tuple((str(a), str(b)) for a, b in d.get("tried", [])),
    )


def verdict_to_dict(result: GuardResult) -> dict[str, Any]:
    d = result.as_dict()
    d["patch"] = list(result.patch) if result.patch is not None else None
    d["ask"] = result.ask
    return d


def verdict_from_dict(d: dict[str, Any]) -> GuardResult:
    patch = d.get("patch")
    return GuardResult(
        passed=bool(d["passed"]),
        feedback=d.get("feedback", ""),
        score=d.get("score"),
        fatal=bool(d.get("fatal", False)),
        checks=tuple(Check(**c) for c in d.get("checks", [])),
        guard=d.get("guard", ""),
        patch=tuple(patch) if patch is not None else None,
        ask=d.get("ask"),
    )


def node_to_dict(node: Node, ctx_ref: int) -> dict[str, Any]:
    """A node as plain data; its context is an index into a shared list (siblings share)."""
    return {
        "id": node.id,
        "parent": node.parent,
        "depth": node.depth,
        "state": node.state,
        "key": node.key,
        "context": ctx_ref,
        "step": node.step,
        "text": node.text,
        "value": node.value,
        "parse_error": node.parse_error,
        "verdict": verdict_to_dict(node.verdict) if node.verdict is not None else None,
        "g": _num(node.g),
        "h": _num(node.h),
        "status": node.status,
        "seed": node.seed,
        "attempt": node.attempt,
        "feedback": list(node.feedback),
        "expansions": node.expansions,
        # Only when there were any: states saved before the field existed stay the same.
        **({"repeats": node.repeats} if node.repeats else {}),
        "children": list(node.children),
    }


def node_from_dict(d: dict[str, Any], contexts: list[Context]) -> Node:
    verdict = d.get("verdict")
    return Node(
        id=d["id"],
        parent=d.get("parent"),
        depth=int(d["depth"]),
        state=d.get("state"),
        key=d["key"],
        context=contexts[int(d["context"])],
        step=d.get("step", ""),
        text=d.get("text", ""),
        value=d.get("value"),
        parse_error=d.get("parse_error"),
        verdict=verdict_from_dict(verdict) if verdict is not None else None,
        g=_unnum(d.get("g", 0.0)),
        h=_unnum(d.get("h", 0.0)),
        status=d.get("status", "open"),
        seed=d.get("seed"),
        attempt=int(d.get("attempt", 1)),
        feedback=list(d.get("feedback", [])),
        expansions=int(d.get("expansions", 0)),
        repeats=int(d.get("repeats", 0)),
        children=[],  # rebuilt by SearchTree.add in id order
    )
