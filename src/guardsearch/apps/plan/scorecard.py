"""The plan experiment's own figures on top of the harness scorecard (docs/plan.md).

The harness gives ε per pipeline vs budget (Wilson intervals), E[calls], backtrack
rate and depths per pipeline, and paired differences. This adds, per
*problem category*, where search backtracks to and how often, and a short
"heuristic vs blind DFS" section, computed with the harness's own `summarize` and
`rate` on each category's trials, plus a plot of the backtrack depths by category.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from guardsearch.apps.plan.problems import CATEGORIES, get_problem
from guardsearch.core.guard_result import GuardResult
from guardsearch.core.steering import Steering
from guardsearch.experiments.metrics import pass_at_budget, rate, summarize
from guardsearch.experiments.trial import TrialResult
from guardsearch.search.heuristic import Failure, RuleHeuristic


def _category(result: TrialResult) -> str:
    found = result.detail.get("category")
    return str(found) if found else get_problem(result.problem).category


def category_figures(
    results: Sequence[TrialResult], methods: Sequence[str], budgets: Sequence[int]
) -> dict[str, dict[str, Any]]:
    """Per method, per category: the harness figures at the largest budget and the curve."""
    top = max(budgets) if budgets else None
    out: dict[str, dict[str, Any]] = {}
    for method in methods:
        runs = [r for r in results if r.method == method]
        per: dict[str, Any] = {}
        for category in CATEGORIES:
            mine = [r for r in runs if _category(r) == category]
            if not mine:
                continue
            headline = [r for r in mine if top is None or r.budget == top]
            figures = summarize(headline)
            per[category] = {
                key: figures[key]
                for key in (
                    "n",
                    "successes",
                    "success_rate",
                    "ci_low",
                    "ci_high",
                    "mean_calls",
                    "mean_calls_to_success",
                    "backtrack_rate",
                    "mean_backtracks",
                    "backtrack_depths",
                    "terminations",
                )
            }
            per[category]["curve"] = [
                {"budget": b, **rate(pass_at_budget(mine, b, derived=True))} for b in budgets
            ]
            per[category]["backtrack_steps"] = _steps(headline)
        out[method] = per
    return out


def _steps(results: Sequence[TrialResult]) -> dict[str, int]:
    """How often each (from -> to) backtrack happened."""
    counts: dict[str, int] = {}
    for r in results:
        for src, dst, _depth in r.detail.get("backtrack_steps", []):
            key = f"{src}->{dst}"
            counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def repeats(
    results: Sequence[TrialResult], events_of: Callable[[str], list[dict[str, Any]]]
) -> dict[str, dict[str, Any]]:
    """Per method, from the stored traces: model calls; the steering counts
    (`core/steering.py`, the one implementation: outputs judged or dropped, repeats of an
    output already judged at the same node, repairs a guard's patch made pass without a
    call, outputs decoded under a declared constraint) with the repeats by step; the
    plan guard's rejections by the rule-table cause its feedback maps to; and per problem
    category, the heuristic's decisions by depth (0 = retry in place)."""
    table = RuleHeuristic()
    out: dict[str, dict[str, Any]] = {}
    totals: dict[str, Steering] = {}
    for r in results:
        row = out.setdefault(r.method, {"calls": 0, "by_step": {}, "causes": {}, "decisions": {}})
        row["calls"] += r.calls
        events = events_of(r.key)
        totals[r.method] = totals.get(r.method, Steering()) + Steering.from_events(events)
        for event in events:
            data = event.get("data", {})
            step = str(event.get("step") or "?")
            if event.get("kind") == "note" and data.get("message") == "heuristic":
                per = row["decisions"].setdefault(_category(r), {})
                went = str(data.get("depth"))
                per[went] = per.get(went, 0) + 1
            if event.get("kind") == "candidate_dropped" and data.get("reason") == "duplicate":
                row["by_step"][step] = row["by_step"].get(step, 0) + 1
            elif event.get("kind") == "guard_verdict" and step == "plan" and not data.get("passed"):
                verdict = GuardResult.fail(str(data.get("feedback") or ""))
                failure = Failure(step="plan", level=3, verdict=verdict, retry_count=1)
                rule_depth, cause = table.explain(failure)
                key = f"{cause} (depth {rule_depth})"
                row["causes"][key] = row["causes"].get(key, 0) + 1
    for method, row in out.items():
        row.update(totals[method].as_dict())
    return out


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def plan_markdown(
    card: Mapping[str, Any],
    categories: Mapping[str, Mapping[str, Any]],
    repeated: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The plan sections: per category, E[calls], heuristic vs blind, repeats."""
    lines = _category_table(categories)
    methods = card.get("methods", {})
    if "search" in methods and "search-blind" in methods:
        lines += _heuristic_vs_blind(methods["search"], methods["search-blind"], card)
    if repeated:
        lines += _repeats_table(repeated)
        lines += _rejections_table(repeated)
        lines += _decisions_table(repeated)
    return "\n".join(lines) + "\n"


def _category_table(categories: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Per pipeline and problem category: ε, calls and where the backtracks went."""
    lines = [
        "## Per problem category (at the largest budget)",
        "",
        "| pipeline | category | n | ε (95% Wilson) | mean calls | E[calls] to success "
        "| backtrack rate | depth distribution | backtracks (from->to) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for method, per in categories.items():
        for category, f in per.items():
            depths = ", ".join(f"{k}: {v}" for k, v in f["backtrack_depths"].items()) or "—"
            steps = ", ".join(f"{k} {v}" for k, v in f["backtrack_steps"].items()) or "—"
            lines.append(
                f"| {method} | {category} | {f['n']} | {_pct(f['success_rate'])} "
                f"[{_pct(f['ci_low'])}, {_pct(f['ci_high'])}] | {f['mean_calls']:.1f} | "
                f"{f['mean_calls_to_success']:.1f} | {_pct(f['backtrack_rate'])} | {depths} "
                f"| {steps} |"
            )
    return lines


def _heuristic_vs_blind(
    s: Mapping[str, Any], b: Mapping[str, Any], card: Mapping[str, Any]
) -> list[str]:
    """The feedback heuristic against blind backtracking: the table, the curve by
    budget and the paired difference (when the card has it)."""
    lines = [
        "",
        "## Heuristic vs blind DFS",
        "",
        "| | search (feedback heuristic) | search-blind (always up one level) |",
        "|---|---|---|",
        f"| ε at the largest budget | {_pct(s['success_rate'])} "
        f"[{_pct(s['ci_low'])}, {_pct(s['ci_high'])}] | {_pct(b['success_rate'])} "
        f"[{_pct(b['ci_low'])}, {_pct(b['ci_high'])}] |",
        f"| mean calls | {s['mean_calls']:.1f} | {b['mean_calls']:.1f} |",
        f"| E[calls] to success | {s['mean_calls_to_success']:.1f} | "
        f"{b['mean_calls_to_success']:.1f} |",
        f"| backtrack rate | {_pct(s['backtrack_rate'])} | {_pct(b['backtrack_rate'])} |",
        f"| mean backtracks | {s['mean_backtracks']:.2f} | {b['mean_backtracks']:.2f} |",
    ]
    curve = " | ".join(
        f"≤{p['budget']}: {_pct(p['success_rate'])} vs {_pct(q['success_rate'])}"
        for p, q in zip(s["curve"], b["curve"], strict=True)
    )
    lines += ["", f"ε by budget (search vs blind): {curve}"]
    for d in card.get("deltas", []):
        if d["method"] == "search" and d["vs"] == "search-blind":
            lines += [
                "",
                f"Paired difference search − blind on {d['n']} trials: "
                f"{100 * d['delta']:+.1f} pts, 95% CI [{100 * d['ci_low']:+.1f}, "
                f"{100 * d['ci_high']:+.1f}] (Newcombe); solved only by search: "
                f"{d['only_method']}, only by blind: {d['only_vs']}.",
            ]
    return lines


def _table(title: str, intro: str, columns: list[str], rows: list[str]) -> list[str]:
    """A section of the report: its heading, a paragraph saying what it counts, and a
    table with these columns."""
    return [
        "",
        f"## {title}",
        "",
        intro,
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
        *rows,
    ]


def _repeats_table(repeated: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Steering per pipeline: repeated outputs, repairs and failures prevented."""
    rows = []
    for method, row in repeated.items():
        steps = ", ".join(f"{k} {v}" for k, v in row["by_step"].items()) or "—"
        rows.append(
            f"| {method} | {row['calls']} | {row.get('outputs', 0)} | {row['repeats']} | "
            f"{_pct(row.get('repeat_share', 0.0))} | {steps} | {row.get('repairs', 0)} | "
            f"{row.get('prevented', 0)} |"
        )
    return _table(
        "Steering: repeats, repairs, failures prevented",
        "Outputs are the answers the guards judged or dropped. A repeat is an answer "
        "that repeats an earlier output of the same node: dropped before any guard runs "
        "(it still costs its call); its share is of all outputs. A repair is a guard's "
        "patch (recon's missing actions added, the strategy's order or the plan's steps "
        "put in order) applied and accepted without a call. Prevented: outputs decoded "
        "under a guard's declared constraint by a backend that enforces it.",
        ["pipeline", "calls", "outputs", "repeats", "share", "by step", "repairs", "prevented"],
        rows,
    )


def _rejections_table(repeated: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Failed plan verdicts per pipeline, by the rule-table cause they match."""
    rows = []
    for method, row in repeated.items():
        causes = ", ".join(
            f"{k}: {v}" for k, v in sorted(row["causes"].items(), key=lambda kv: -kv[1])
        )
        rows.append(f"| {method} | {causes or '—'} |")
    return _table(
        "Plan rejections by rule-table cause",
        "Every failed plan verdict, classified by the first rule of the table its "
        "feedback matches (repetition aside).",
        ["pipeline", "rejections by cause"],
        rows,
    )


def _decisions_table(repeated: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The heuristic's decisions per pipeline and category, by backtrack depth."""
    rows = []
    for method, row in repeated.items():
        for category, per in row["decisions"].items():
            shown = ", ".join(f"{d}: {n}" for d, n in sorted(per.items()))
            rows.append(f"| {method} | {category} | {shown} |")
    return _table(
        "Heuristic decisions by depth, per category (0 = retry in place)",
        "Every failed attempt asks the heuristic where to go; a backtrack above counts "
        "only the decisions with depth ≥ 1 that the search acted on.",
        ["pipeline", "category", "decisions by depth"],
        rows,
    )


def plot_depths(categories: Mapping[str, Mapping[str, Any]], path: Path, title: str) -> None:
    """Backtrack depth counts per category, one panel per backtracking pipeline."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [m for m in ("search", "search-blind") if m in categories] or list(categories)
    fig, axes = plt.subplots(1, max(1, len(shown)), figsize=(5 * max(1, len(shown)), 4))
    axes = axes if hasattr(axes, "__len__") else [axes]
    for ax, method in zip(axes, shown, strict=False):
        per = categories[method]
        names = list(per)
        depths = sorted({int(d) for f in per.values() for d in f["backtrack_depths"]} | {1})
        width = 0.8 / max(1, len(depths))
        for i, depth in enumerate(depths):
            ys = [per[c]["backtrack_depths"].get(str(depth), 0) for c in names]
            xs = [j + i * width for j in range(len(names))]
            ax.bar(xs, ys, width=width, label=f"depth {depth}")
        ax.set_xticks(
            [j + width * (len(depths) - 1) / 2 for j in range(len(names))],
            [n.replace("_", "\n") for n in names],
            fontsize=8,
        )
        ax.set_title(f"{method}: backtracks by depth")
        ax.set_ylabel("backtracks")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3, axis="y")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
