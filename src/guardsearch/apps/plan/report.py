"""A plan search's result as JSON: the plan, the path, the backtracks and the tree.

A *backtrack* here is one the search acted on: it went back and regenerated an
earlier step. A chain of backtrack events with no expansion between them (a level
out of visits handing the failure further up) is one backtrack, from the step that
failed to the step regenerated, its depth the sum of the chain's; its reason and rule
are the first event's (what started the chain).
"""

from __future__ import annotations

from typing import Any

from guardsearch.apps.plan.task_guards import verdicts
from guardsearch.core.events import Event
from guardsearch.search.node import Node
from guardsearch.search.result import SearchResult

_PREVIEW = 200


def _run_events(events: tuple[Event, ...]) -> list[Event]:
    """The events of the last run in a (possibly shared) trace."""
    starts = [i for i, e in enumerate(events) if e.kind == "run_start"]
    return list(events[starts[-1] :]) if starts else list(events)


def backtracks(result: SearchResult) -> list[dict[str, Any]]:
    """The backtracks the search acted on, in order: from, to, depth, reason, rule, feedback.

    `reason` is who decided (`heuristic`, `space`, or `ceiling` when a level ran out of
    retries or visits); `rule` is why: the rule-table row that matched
    (`not satisfiable -> missing context or wrong step ordering`), the heuristic's name
    for a plain function (`backtrack_one_level`), `model: recon caused it`, or for a
    ceiling `rmax exhausted at plan` / `visit limit of strategy`."""
    out: list[dict[str, Any]] = []
    chain: list[Event] = []
    for event in _run_events(result.trace.events):
        if event.kind == "backtrack" and event.data.get("to") is not None:
            chain.append(event)
        elif event.kind == "expansion" and event.data.get("phase") == "start" and chain:
            if event.node == chain[-1].data["to"]:
                first = chain[0]
                out.append(
                    {
                        "from": first.step,
                        "to": chain[-1].data.get("to_step"),
                        "depth": sum(int(e.data.get("depth", 0)) for e in chain),
                        "reason": first.data.get("reason"),
                        "rule": first.data.get("rule"),
                        "feedback": first.data.get("feedback", ""),
                    }
                )
            chain = []
    return out


def _plan_of(result: SearchResult, path: list[Node]) -> Any:
    """The winning plan; else the best plan judged (the last node of the best path, when
    it is a plan that parsed), kept so a failed run still shows what it got to."""
    if result.succeeded:
        return result.answer
    last = path[-1] if path else None
    if last is None or last.step != "plan" or not isinstance(last.value, dict):
        return None
    return last.value


def best_path(result: SearchResult) -> list[Node]:
    """The winning path; else the path to the best plan judged (highest score, then
    latest), so a failed run still shows the plan that got furthest and why it failed;
    else the search's own best failed path."""
    if result.succeeded:
        return list(result.path[1:])
    last = max((n.depth for n in result.tree), default=0)
    plans = [n for n in result.tree if n.depth == last and n.depth > 0 and n.verdict]
    if not plans:
        return list(result.path[1:])
    best = max(plans, key=lambda n: (n.score or 0.0, int(n.id[1:]) if n.id[1:].isdigit() else 0))
    return result.tree.path(best.id)[1:]


def result_dict(result: SearchResult) -> dict[str, Any]:
    """The CLI's JSON contract (without the problem/model/timing fields)."""
    path = best_path(result)
    last = path[-1] if path else None
    return {
        "succeeded": result.succeeded,
        "termination": result.termination,
        "plan": _plan_of(result, path),
        "verdicts": verdicts(last.verdict) if last is not None else [],
        "path": [
            {
                "step": n.step,
                "passed": bool(n.verdict and n.verdict.passed),
                "text": n.preview(_PREVIEW),
                "feedback": n.verdict.feedback if n.verdict else "",
            }
            for n in path
        ],
        "calls": result.calls,
        "tokens": result.tokens,
        "expansions": result.expansions,
        "steering": result.steering.as_dict(),
        "backtracks": backtracks(result),
        "tree": [
            {
                "id": n.id,
                "parent": n.parent,
                "step": n.step,
                "attempt": n.attempt,
                "passed": bool(n.verdict and n.verdict.passed),
                "status": n.status,
                "feedback": n.verdict.feedback if n.verdict else "",
            }
            for n in result.tree
            if n.parent is not None
        ],
    }


def tree_summary(payload: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Judged nodes by step (in pipeline order) and status, from a `result_dict`:
    `passed` (open or expanded), `goal`, `failed`, `pruned`."""
    out: dict[str, dict[str, int]] = {}
    for node in payload.get("tree", []):
        status = str(node.get("status"))
        status = "passed" if status in ("open", "expanded") else status
        per = out.setdefault(str(node.get("step")), {})
        per[status] = per.get(status, 0) + 1
    return out


def summary_lines(payload: dict[str, Any]) -> list[str]:
    """The search tree in a few lines: nodes by step and status, then every backtrack
    with its depth and cause, then how the search ended."""
    counts = tree_summary(payload)
    total = sum(sum(per.values()) for per in counts.values())
    lines = [f"search tree: {total} node{'s' if total != 1 else ''} judged"]
    width = max((len(step) for step in counts), default=0)
    for step, per in counts.items():
        shown = ", ".join(
            f"{per[s]} {s}" for s in ("goal", "passed", "failed", "pruned") if s in per
        )
        lines.append(f"  {step:<{width}}  {sum(per.values())}: {shown}")
    backs = payload.get("backtracks", [])
    lines.append(f"backtracks: {len(backs)}")
    for b in backs:
        lines.append(
            f"  {b['from']} -> {b['to']} (depth {b['depth']}, {b['reason']}): "
            f"{b.get('rule') or 'no rule'}"
        )
    lines.append(f"termination: {payload.get('termination')}")
    return lines
