"""The scorecard: every method's figures, the pass-rate-vs-budget curve and the deltas,
as JSON (for machines) and Markdown (for people), plus the PNG plots."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from guardsearch.experiments.metrics import newcombe_paired, pass_at_budget, rate, summarize
from guardsearch.experiments.trial import TrialResult


def build_scorecard(
    results: Sequence[TrialResult],
    *,
    methods: Sequence[str],
    problems: Sequence[str],
    budgets: Sequence[int],
    derived: Mapping[str, bool],
    meta: Mapping[str, Any],
) -> dict[str, Any]:
    """Figures per method. A method's headline row uses its runs at the largest budget."""
    by_method: dict[str, list[TrialResult]] = {m: [] for m in methods}
    for r in results:
        if r.method in by_method:
            by_method[r.method].append(r)
    top = max(budgets) if budgets else None
    models = sorted({r.model for r in results})
    card: dict[str, Any] = {
        **meta,
        "models": models,
        "budgets": list(budgets),
        "problems_planned": len(problems),
        "methods": {},
        "deltas": [],
    }
    headlines: dict[str, list[TrialResult]] = {}
    for label in methods:
        runs = by_method[label]
        headline = [r for r in runs if r.budget == top] if top is not None else runs
        headlines[label] = headline
        figures = summarize(headline)
        figures["budget"] = top
        figures["derived_budgets"] = bool(derived.get(label))
        figures["problems_done"] = len({r.problem for r in headline})
        figures["curve"] = [
            {"budget": b, **rate(pass_at_budget(runs, b, derived=bool(derived.get(label))))}
            for b in budgets
        ]
        card["methods"][label] = figures
    reference = meta.get("reference") or (methods[0] if methods else None)
    pairs = [(label, reference) for label in methods if reference and label != reference]
    pairs += [(a, b) for a, b in meta.get("compare") or [] if (a, b) not in pairs]
    for a, b in pairs:
        if a in headlines and b in headlines:
            card["deltas"].append(paired_delta(headlines[a], headlines[b], a, b))
    return card


def paired_delta(
    first: Sequence[TrialResult], second: Sequence[TrialResult], a: str, b: str
) -> dict[str, Any]:
    """a − b in pass rate on the problems (and trials) both ran, with tokens on that set.

    The interval is for paired data (Newcombe's method 10): the two outcomes on one
    problem are correlated, so agreement between the methods narrows it."""
    one = {(r.problem, r.trial): r for r in first}
    two = {(r.problem, r.trial): r for r in second}
    common = sorted(set(one) & set(two))
    s1 = sum(one[k].succeeded for k in common)
    s2 = sum(two[k].succeeded for k in common)
    n = len(common)
    both = sum(one[k].succeeded and two[k].succeeded for k in common)
    only_a = s1 - both
    only_b = s2 - both
    d, low, high = newcombe_paired(both, only_a, only_b, n - both - only_a - only_b)
    return {
        "method": a,
        "vs": b,
        "n": n,
        "successes": s1,
        "successes_vs": s2,
        "only_method": only_a,
        "only_vs": only_b,
        "delta": d,
        "ci_low": low,
        "ci_high": high,
        "mean_tokens": sum(one[k].tokens for k in common) / n if n else 0.0,
        "mean_tokens_vs": sum(two[k].tokens for k in common) / n if n else 0.0,
    }


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _num(x: float) -> str:
    return f"{x:,.1f}" if abs(x) < 100 else f"{x:,.0f}"


def markdown(card: Mapping[str, Any], *, notes: str | None = None) -> str:
    """The scorecard as a Markdown report; `notes` names a hand-written notes file
    beside it, linked at the top."""
    lines = [
        f"# Scorecard: {card.get('name', 'experiment')}",
        "",
    ]
    if notes:
        lines += [
            f"> What this run means, in words: [{notes}]({notes}) (hand-written; "
            "this file is generated and rewritten on every run).",
            "",
        ]
    lines += [
        f"- suite: `{card.get('suite')}`; model spec: `{card.get('model')}` "
        f"({', '.join(card.get('models') or []) or 'no trials yet'})",
        f"- problems: `{json.dumps(card.get('problems'))}` ({card['problems_planned']} planned); "
        f"trials per problem: {card.get('trials')}; executor: {card.get('executor')}",
        f"- budgets (model calls per problem): {', '.join(str(b) for b in card['budgets'])}",
        "",
        "## Per method (at the largest budget)",
        "",
        "| method | n | solved | success (95% Wilson CI) | mean / median calls "
        "| prompt tok | completion tok | s / problem | backtrack rate | terminations |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, m in card["methods"].items():
        terms = ", ".join(f"{k} {v}" for k, v in m["terminations"].items())
        lines.append(
            f"| {label} | {m['n']} | {m['successes']} | {_pct(m['success_rate'])} "
            f"[{_pct(m['ci_low'])}, {_pct(m['ci_high'])}] | {_num(m['mean_calls'])} / "
            f"{_num(m['median_calls'])} | {_num(m['mean_prompt_tokens'])} | "
            f"{_num(m['mean_completion_tokens'])} | {m['mean_seconds']:.1f} | "
            f"{_pct(m['backtrack_rate'])} | {terms} |"
        )
    budgets = card["budgets"]
    if budgets:
        lines += [
            "",
            "## Pass rate vs budget",
            "",
            "| method | " + " | ".join(f"≤ {b} calls" for b in budgets) + " |",
            "|---|" + "---|" * len(budgets),
        ]
        for label, m in card["methods"].items():
            cells = [f"{_pct(p['success_rate'])} ({p['successes']}/{p['n']})" for p in m["curve"]]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
        lines.append(
            "Methods marked derived ran once per problem at the largest budget; their "
            "rate at a smaller budget counts the trials solved within that many calls: "
            + (", ".join(k for k, m in card["methods"].items() if m["derived_budgets"]) or "none")
            + "."
        )
    if card["deltas"]:
        lines += [
            "",
            "## Difference in pass rate",
            "",
            "On the problems both methods ran (paired: the interval is Newcombe's method 10 "
            "for paired proportions); tokens are means per problem.",
            "",
            "| method | vs | n | solved (method / vs) | only method / only vs | delta "
            "| 95% CI (Newcombe, paired) | tokens (method / vs) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for d in card["deltas"]:
            lines.append(
                f"| {d['method']} | {d['vs']} | {d['n']} | {d['successes']} / "
                f"{d['successes_vs']} | {d['only_method']} / {d['only_vs']} | "
                f"{100 * d['delta']:+.1f} pts | "
                f"[{100 * d['ci_low']:+.1f}, {100 * d['ci_high']:+.1f}] | "
                f"{_num(d['mean_tokens'])} / {_num(d['mean_tokens_vs'])} |"
            )
    lines += _cost_sections(card)
    return "\n".join(lines) + "\n"


def _cost_sections(card: Mapping[str, Any]) -> list[str]:
    """The report's sections on what the methods spent and how they were steered:
    prefix reuse, steering counts, per model of a ladder, backtracks."""
    lines: list[str] = []
    lines += [
        "",
        "## Prefix reuse (prompt tokens evaluated vs naive)",
        "",
        "| method | prompt tokens (naive: every call evaluates its whole prompt) "
        "| reused from the KV cache | evaluated | reused share |",
        "|---|---|---|---|---|",
    ]
    for label, m in card["methods"].items():
        p = m["prefix_reuse"]
        lines.append(
            f"| {label} | {p['prompt_tokens']:,} | {p['cached_prompt_tokens']:,} | "
            f"{p['evaluated_prompt_tokens']:,} | {_pct(p['reused_share'])} |"
        )
    steered = {k: m["steering"] for k, m in card["methods"].items() if m.get("steering")}
    if any(v.get("outputs") for v in steered.values()):
        lines += [
            "",
            "## Steering (repeats, repairs, failures prevented)",
            "",
            "Outputs the guards judged or dropped; repeats of an output already judged at the "
            "same node (dropped unjudged); repairs a guard's patch made pass without a call; "
            "outputs decoded under a guard's constraint by a backend that enforces it.",
            "",
            "| method | outputs | repeats (share) | repairs | prevented |",
            "|---|---|---|---|---|",
        ]
        for label, v in steered.items():
            lines.append(
                f"| {label} | {v['outputs']:,} | {v['repeats']:,} ({_pct(v['repeat_share'])}) "
                f"| {v['repairs']:,} | {v['prevented']:,} |"
            )
    ladders = {k: m["per_model"] for k, m in card["methods"].items() if m.get("per_model")}
    if ladders:
        lines += [
            "",
            "## Per model (model ladders)",
            "",
            "| method | model | calls | prompt tokens | completion tokens | seconds "
            "| escalations |",
            "|---|---|---|---|---|---|---|",
        ]
        for label, rows in ladders.items():
            for name, row in rows.items():
                lines.append(
                    f"| {label} | {name} | {row['calls']} | {row['prompt_tokens']:,} | "
                    f"{row['completion_tokens']:,} | {row['seconds']:.1f} | "
                    f"{row['escalations']} |"
                )
    lines += [
        "",
        "## Backtracks",
        "",
        "| method | trials that backtracked | mean backtracks | depth distribution |",
        "|---|---|---|---|",
    ]
    for label, m in card["methods"].items():
        dist = ", ".join(f"{k}: {v}" for k, v in m["backtrack_depths"].items()) or "—"
        lines.append(
            f"| {label} | {_pct(m['backtrack_rate'])} | {m['mean_backtracks']:.1f} | {dist} |"
        )
    return lines


def notes_path(out: Path, name: str) -> Path:
    """Where hand-written notes on a scorecard live: `NAME_notes.md` beside it. The
    generator never writes it; when it exists, the card links it at the top."""
    return out / f"{name}_notes.md"


def write_scorecard(card: Mapping[str, Any], out: Path, name: str) -> dict[str, Path]:
    """`NAME.json`, `NAME.md` and the plots `NAME_budget.png`, `NAME_calls.png`,
    `NAME_prefix.png` in `out` (NAME.md links `NAME_notes.md` if that exists)."""
    from guardsearch.experiments.plots import plot_calls, plot_pass_rate, plot_prefix_reuse

    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": out / f"{name}.json",
        "markdown": out / f"{name}.md",
        "budget_plot": out / f"{name}_budget.png",
        "calls_plot": out / f"{name}_calls.png",
        "prefix_plot": out / f"{name}_prefix.png",
    }
    paths["json"].write_text(json.dumps(card, indent=2, default=str) + "\n", encoding="utf-8")
    notes = notes_path(out, name)
    paths["markdown"].write_text(
        markdown(card, notes=notes.name if notes.exists() else None), encoding="utf-8"
    )
    plot_pass_rate(card, paths["budget_plot"])
    plot_calls(card, paths["calls_plot"])
    plot_prefix_reuse(card, paths["prefix_plot"])
    return paths
