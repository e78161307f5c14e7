"""`guardsearch bench plan`: the plan experiment (docs/plan.md) through the experiment harness.

    guardsearch bench plan --pipelines single,full,search,search-blind --budgets 1,5,10,20,30

Runs pipeline × problem × trial at the largest budget (every plan pipeline is seeded,
so smaller budgets are read off those runs), writes the harness scorecard (ε vs budget
with Wilson intervals, E[calls], backtracks, paired deltas, plots) and the plan
sections: per-category backtrack rate and depth distribution, heuristic vs blind DFS.
Paired deltas: every pipeline vs the first (`single`), and search vs
the `full` pipeline (search and search-blind), plus search vs search-blind.

The report (NAME.md) is generated and rewritten on every run; hand-written notes go in
NAME_notes.md beside it, which the report links at the top and the command never writes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from guardsearch.cli.bench_common import StoreOption, run_trials
from guardsearch.cli.output import exit_for, fail, out, print_json
from guardsearch.core.errors import GuardsearchError

SUITE = "guardsearch.apps.plan.suite:suite"


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def comparisons(methods: list[str]) -> list[list[str]]:
    """The extra paired deltas (beyond every pipeline vs the first): search and
    search-blind vs the full pipeline, and search vs search-blind."""
    wanted = [["search", "full"], ["search-blind", "full"], ["search", "search-blind"]]
    reference = methods[0] if methods else None
    return [
        [a, b]
        for a, b in wanted
        if a in methods and b in methods and b != reference  # vs the first: already there
    ]


def _problems(problems: str, per_category: int | None) -> Any:
    if per_category is not None:
        return {"per_category": per_category}
    return "all" if problems == "all" else _split(problems)


def write_report(runner: Any, card: dict[str, Any], report_dir: Path, name: str) -> dict[str, Any]:
    """The harness scorecard plus the plan sections, as NAME.md/.json/_budget.png/..."""
    from guardsearch.apps.plan.scorecard import (
        category_figures,
        plan_markdown,
        plot_depths,
        repeats,
    )
    from guardsearch.experiments.scorecard import write_scorecard

    results = runner.results()
    categories = category_figures(results, [m.label for m in runner.methods], runner.config.budgets)
    stored_events = getattr(runner.store, "events", None)
    repeated = None
    if stored_events is not None:
        # By key, each trial's own trace (the one with its config fingerprint).
        chosen = {r.key: r for r in results}
        repeated = repeats(results, lambda key: stored_events(chosen[key]))
    paths = write_scorecard(card, report_dir, name)
    full = {**card, "categories": categories, "repeats": repeated}
    paths["json"].write_text(json.dumps(full, indent=2, default=str) + "\n", encoding="utf-8")
    with paths["markdown"].open("a", encoding="utf-8") as fh:
        fh.write("\n" + plan_markdown(card, categories, repeated))
    depths = report_dir / f"{name}_depths.png"
    plot_depths(categories, depths, f"{name}: backtracks by problem category")
    return full


def plan(
    pipelines: Annotated[
        str,
        typer.Option(help="Comma-separated: single,classify-then-plan,full,search,search-blind."),
    ] = "single,full,search,search-blind",
    budgets: Annotated[str, typer.Option(help="Call budgets of the ε curve.")] = "1,5,10,20,30",
    trials: Annotated[int, typer.Option(min=1, help="Trials (seeds) per problem.")] = 1,
    problems: Annotated[str, typer.Option(help="'all' or comma-separated problem ids.")] = "all",
    per_category: Annotated[
        int | None, typer.Option(min=1, help="Only the first N problems of each category.")
    ] = None,
    model: Annotated[str, typer.Option(help="Model spec.")] = "embedded",
    guard_level: Annotated[str, typer.Option(help="minimal | medium | expansive.")] = "expansive",
    out_dir: Annotated[
        Path, typer.Option("--out", help="Trials, traces and the scorecard go here (resumable).")
    ] = Path("runs/bench-plan"),
    report_dir: Annotated[
        Path | None,
        typer.Option(help="Write the report here instead of into --out (e.g. benchmarks/results)."),
    ] = None,
    name: Annotated[str, typer.Option(help="File name of the scorecard and plots.")] = "plan",
    store: StoreOption = None,
    quiet: Annotated[bool, typer.Option(help="No progress on stderr.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """The plan experiment: ε vs budget per pipeline, backtracks, heuristic vs blind."""
    from guardsearch.experiments import ExperimentConfig

    methods = _split(pipelines)
    try:
        numbers = sorted({int(b) for b in _split(budgets)})
    except ValueError:
        fail(f"--budgets takes numbers like 1,5,10: {budgets}", as_json=as_json)
    try:
        config = ExperimentConfig.parse(
            {
                "name": name,
                "suite": SUITE,
                "problems": _problems(problems, per_category),
                "methods": [
                    {"method": m, "options": {"guard_level": guard_level}} for m in methods
                ],
                "model": model,
                "budgets": numbers,
                "derive_budgets": True,
                "trials": trials,
                "out": str(out_dir),
                # The report is written once, where it is wanted, not also into out_dir.
                "report_dir": str(report_dir) if report_dir is not None else None,
                "reference": methods[0] if methods else None,
                "compare": comparisons(methods),
            }
        )
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)
    report = run_trials(
        config,
        store_url=store,
        quiet=quiet,
        as_json=as_json,
        report=lambda runner, card: write_report(runner, card, report_dir or out_dir, name),
    )
    if as_json:
        print_json(
            {
                "name": name,
                "out": str(report_dir or out_dir),
                "budgets": numbers,
                "methods": {
                    k: {
                        "n": m["n"],
                        "success_rate": m["success_rate"],
                        "ci_low": m["ci_low"],
                        "ci_high": m["ci_high"],
                        "mean_calls": m["mean_calls"],
                        "backtrack_rate": m["backtrack_rate"],
                        "curve": m["curve"],
                    }
                    for k, m in report["methods"].items()
                },
                "deltas": report["deltas"],
            }
        )
    else:
        out.print(f"report: {(report_dir or out_dir) / (name + '.md')}")
        for label, m in report["methods"].items():
            out.print(
                f"{label:>14}: {100 * m['success_rate']:5.1f}% "
                f"[{100 * m['ci_low']:.1f}, {100 * m['ci_high']:.1f}] of {m['n']}, "
                f"{m['mean_calls']:.1f} calls, backtrack rate {100 * m['backtrack_rate']:.0f}%"
            )
