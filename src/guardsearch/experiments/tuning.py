"""Heuristic tuning from stored traces (docs/experiments.md).

A search trial stores every judged node (`detail["nodes"]`: id, parent, score, status,
expansions, checks). Over many trials this module finds:

- *misleading highs*: nodes the evaluator scored high that the search built on, yet
  nothing below them reached a goal (the evaluator sent the search into a dead end);
- *missed lows*: nodes on a winning path that the evaluator scored low;
- *a dry proposer*: from the traces, how many candidates the proposer offered, how many
  dedup dropped as repeats, and which searches ended `all_pruned` with budget left;

and proposes changes: per feature (a named check, or any feature function of a node),
how much more often nodes that have it lead to a goal (a smoothed likelihood ratio),
turned into proposed weights; and a pruning threshold below which no goal-leading node
ever scored, with the expansions it would have saved. A re-run with the proposal
(another method entry in the experiment) shows whether it helped.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from guardsearch.core.steering import Steering
from guardsearch.experiments.trial import TrialResult

Features = Callable[[Mapping[str, Any]], Mapping[str, float]]


def checks_as_features(node: Mapping[str, Any]) -> dict[str, float]:
    return {k: float(bool(v)) for k, v in (node.get("checks") or {}).items()}


@dataclass(frozen=True)
class LabelledNode:
    """An intermediate node the search built on, and whether a goal lies below it."""

    trial: str
    node: Mapping[str, Any]
    leads_to_goal: bool
    winning: bool


def goal_below(nodes: Sequence[Mapping[str, Any]]) -> dict[str, bool]:
    """For each node id: does a goal lie in its subtree? (Children come after parents.)"""
    below: dict[str, bool] = defaultdict(bool)
    for n in reversed(nodes):
        if n["status"] == "goal" or below[n["id"]]:
            below[n["parent"]] = True
    return below


def labelled_nodes(results: Sequence[TrialResult]) -> list[LabelledNode]:
    """Nodes that were expanded (so their fate is known) and are not goals themselves."""
    out: list[LabelledNode] = []
    for r in results:
        nodes = r.detail.get("nodes") or []
        below = goal_below(nodes)
        for n in nodes:
            if n["status"] == "goal" or not n.get("expansions") or n.get("score") is None:
                continue
            out.append(LabelledNode(r.key, n, below[n["id"]], bool(n.get("winning"))))
    return out


def feature_stats(
    nodes: Sequence[LabelledNode], features: Features = checks_as_features
) -> dict[str, dict[str, float]]:
    """Per feature: P(goal below | feature) vs P(goal below | not), smoothed, and the ratio.

    A feature in 0..1 counts as present at >= 0.5.
    """
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # goal|on, on, goal|off, off
    for ln in nodes:
        for name, value in features(ln.node).items():
            c = counts[name]
            if value >= 0.5:
                c[0] += ln.leads_to_goal
                c[1] += 1
            else:
                c[2] += ln.leads_to_goal
                c[3] += 1
    stats = {}
    for name, (g_on, on, g_off, off) in sorted(counts.items()):
        p_on = (g_on + 0.5) / (on + 1)
        p_off = (g_off + 0.5) / (off + 1)
        stats[name] = {
            "present": on,
            "absent": off,
            "goal_rate_present": p_on,
            "goal_rate_absent": p_off,
            "ratio": p_on / p_off,
        }
    return stats


def propose_weights(
    stats: Mapping[str, Mapping[str, float]], scale: float = 3.0
) -> dict[str, float]:
    """Weight ∝ log of the ratio (features that do not help get 0), summing to `scale`."""
    raw = {k: max(0.0, math.log(v["ratio"])) for k, v in stats.items()}
    total = sum(raw.values())
    if total == 0:
        return {k: scale / len(raw) for k in raw} if raw else {}
    return {k: round(scale * v / total, 3) for k, v in raw.items()}


def propose_threshold(nodes: Sequence[LabelledNode]) -> dict[str, Any]:
    """The highest score threshold that keeps every goal-leading node, and what it saves."""
    good = [float(ln.node["score"]) for ln in nodes if ln.leads_to_goal]
    bad = [ln for ln in nodes if not ln.leads_to_goal]
    if not good:
        return {"threshold": None, "saved_expansions": 0, "reason": "no goal-leading nodes"}
    threshold = min(good)
    saved = [ln for ln in bad if float(ln.node["score"]) < threshold]
    return {
        "threshold": round(threshold, 6) if saved else None,
        "saved_expansions": sum(int(ln.node.get("expansions") or 0) for ln in saved),
        "pruned_nodes": len(saved),
        "reason": (
            f"no node below {threshold:.2f} ever led to a goal"
            if saved
            else "every score level held a goal-leading node"
        ),
    }


Events = Callable[[TrialResult], Sequence[Mapping[str, Any]]]


def proposer_yield(results: Sequence[TrialResult], events_of: Events) -> dict[str, Any]:
    """Candidates offered vs dropped as repeats, and the searches that ran dry: ended
    `all_pruned` (nothing left to expand) with calls left under their budget."""
    candidates = repeats = 0
    steered = Steering()
    dry: list[int] = []
    for r in results:
        events = events_of(r)
        steered = steered + Steering.from_events(events)
        for event in events:
            data = event.get("data") or {}
            if event.get("kind") == "expansion" and data.get("phase") == "end":
                dropped = int(data.get("dropped") or 0)
                candidates += len(data.get("children") or []) + dropped
                repeats += dropped
        if r.termination == "all_pruned" and r.budget is not None and r.calls < r.budget:
            dry.append(r.budget - r.calls)
    return {
        "candidates": candidates,
        "repeats": repeats,
        "repeat_share": round(repeats / candidates, 4) if candidates else 0.0,
        "repairs": steered.repairs,
        "prevented": steered.prevented,
        "failed": sum(not r.succeeded for r in results),
        "ran_dry": len(dry),
        "ran_dry_calls_left": sorted(dry),
    }


def tuning_report(
    results: Sequence[TrialResult],
    *,
    events_of: Events | None = None,
    features: Features = checks_as_features,
    high: float = 0.7,
    low: float = 0.4,
    examples: int = 8,
) -> dict[str, Any]:
    """The misleading highs, the missed lows, feature statistics and the proposal; with
    `events_of` (a trial's stored trace), the proposer's yield too."""
    nodes = labelled_nodes(results)
    misleading = [ln for ln in nodes if float(ln.node["score"]) >= high and not ln.leads_to_goal]
    missed = [ln for ln in nodes if ln.winning and float(ln.node["score"]) <= low]
    stats = feature_stats(nodes, features)

    def show(ln: LabelledNode) -> dict[str, Any]:
        n = ln.node
        return {
            "trial": ln.trial,
            "node": n["id"],
            "text": n.get("text"),
            "score": n["score"],
            "expansions": n.get("expansions"),
            "features": dict(features(n)),
        }

    rank = sorted(misleading, key=lambda ln: (-float(ln.node["score"]), ln.trial, ln.node["id"]))
    return {
        "trials": len(results),
        "expanded_nodes": len(nodes),
        "goal_leading_nodes": sum(ln.leads_to_goal for ln in nodes),
        "high": high,
        "low": low,
        "misleading_high": len(misleading),
        "misleading_high_by_depth": {
            str(d): sum(1 for ln in misleading if int(ln.node.get("depth") or 0) == d)
            for d in sorted({int(ln.node.get("depth") or 0) for ln in misleading})
        },
        "misleading_high_expansions": sum(int(ln.node.get("expansions") or 0) for ln in misleading),
        "missed_low": len(missed),
        "misleading_examples": [show(ln) for ln in rank[:examples]],
        "missed_examples": [show(ln) for ln in missed[:examples]],
        "features": stats,
        "proposer": proposer_yield(results, events_of) if events_of is not None else None,
        "proposal": {
            "weights": propose_weights(stats),
            **propose_threshold(nodes),
        },
    }


def tuning_markdown(report: Mapping[str, Any], title: str = "Heuristic tuning") -> str:
    lines = [
        f"# {title}",
        "",
        f"From {report['trials']} stored trials: {report['expanded_nodes']} expanded "
        f"intermediate nodes, {report['goal_leading_nodes']} of them with a goal below.",
        "",
        f"- **misleading highs** (score ≥ {report['high']}, built on, dead end): "
        f"{report['misleading_high']} nodes, {report['misleading_high_expansions']} expansions; "
        f"by depth: {report['misleading_high_by_depth']}",
        f"- **missed lows** (score ≤ {report['low']} on a winning path): {report['missed_low']}",
    ]
    y = report.get("proposer")
    if y:
        left = y["ran_dry_calls_left"]
        lines.append(
            f"- **the proposer**: {y['candidates']} candidates offered, {y['repeats']} "
            f"({100 * y['repeat_share']:.0f}%) dropped as repeats; {y['ran_dry']} of "
            f"{y['failed']} failed searches ran dry (`all_pruned` with calls left: "
            f"{', '.join(map(str, left)) or 'none'}); {y.get('repairs', 0)} repairs "
            f"accepted, {y.get('prevented', 0)} failures prevented by constraints"
        )
    lines += [
        "",
        "## Features",
        "",
        "| feature | nodes with / without | P(goal below) with | without | ratio |",
        "|---|---|---|---|---|",
    ]
    for name, s in report["features"].items():
        lines.append(
            f"| {name} | {s['present']} / {s['absent']} | {s['goal_rate_present']:.2f} | "
            f"{s['goal_rate_absent']:.2f} | {s['ratio']:.2f} |"
        )
    p = report["proposal"]
    lines += [
        "",
        "## Proposal",
        "",
        f"- weights: `{p['weights']}` (∝ log ratio; features that do not help get 0)",
        f"- threshold: `{p['threshold']}` — {p['reason']}; "
        f"{p.get('pruned_nodes', 0)} dead-end nodes below it, "
        f"{p['saved_expansions']} expansions saved in these traces",
        "",
        "## Misleading highs (examples)",
        "",
        "| trial | node | step | score | expansions |",
        "|---|---|---|---|---|",
    ]
    for ex in report["misleading_examples"]:
        lines.append(
            f"| {_cell(ex['trial'])} | {ex['node']} | {ex['text']} | {ex['score']:.2f} | "
            f"{ex['expansions']} |"
        )
    lines += ["", "## Missed lows (examples)", ""]
    lines += ["| trial | node | step | score |", "|---|---|---|---|"]
    for ex in report["missed_examples"]:
        lines.append(f"| {_cell(ex['trial'])} | {ex['node']} | {ex['text']} | {ex['score']:.2f} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")
