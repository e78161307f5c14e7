"""`guardsearch bench ...`: experiments over problem × method × trial × budget.

guardsearch bench game24 --range 900:1000 --methods io,cot,tot-bfs,astar --json
guardsearch bench run experiment.yaml
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from guardsearch.cli.bench_common import StoreOption, run_trials
from guardsearch.cli.bench_plan import plan as bench_plan
from guardsearch.cli.output import exit_for, fail, out, print_json
from guardsearch.core.errors import GuardsearchError

bench_app = typer.Typer(
    help="Benchmarks: run methods over problems, score them (resumable).", no_args_is_help=True
)

JSON_FIELDS = ("success_rate", "ci_low", "ci_high", "mean_calls", "mean_tokens", "mean_seconds")


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _budgets(budgets: str | None, budget_calls: int) -> list[int]:
    if not budgets:
        return [budget_calls]
    try:
        return sorted({int(b) for b in _split(budgets)})
    except ValueError as exc:
        raise typer.BadParameter(f"--budgets takes numbers like 10,20,40: {budgets}") from exc


def summary(card: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    """The `--json` contract: per method the headline figures at the largest budget."""
    return {
        "name": card.get("name"),
        "model": card.get("model"),
        "models": card.get("models"),
        "budget": max(card["budgets"]) if card["budgets"] else None,
        "problems": card["problems_planned"],
        "out": str(out_dir),
        "methods": {
            label: {
                **{k: m[k] for k in JSON_FIELDS},
                "n": m["n"],
                "successes": m["successes"],
                "mean_prompt_tokens": m["mean_prompt_tokens"],
                "mean_completion_tokens": m["mean_completion_tokens"],
                "curve": [
                    {k: p[k] for k in ("budget", "n", "success_rate", "ci_low", "ci_high")}
                    for p in m["curve"]
                ],
            }
            for label, m in card["methods"].items()
        },
    }


def _run(
    config: Any,
    executor_name: str,
    ray_address: str | None,
    quiet: bool,
    as_json: bool,
    store_url: str | None = None,
) -> None:
    from guardsearch.experiments import executor_named

    for folder in (config.out_dir, Path(config.report_dir or config.out)):
        if folder.exists() and not folder.is_dir():
            fail(f"{folder} is a file, not a folder for the results", as_json=as_json)
    card = run_trials(
        config,
        store_url=store_url,
        quiet=quiet,
        as_json=as_json,
        executor=lambda: executor_named(executor_name, address=ray_address),
    )
    if as_json:
        print_json(summary(card, config.out_dir))
    else:
        out.print(f"scorecard: {Path(config.report_dir or config.out) / (config.name + '.md')}")
        for label, m in card["methods"].items():
            out.print(
                f"{label:>14}: {100 * m['success_rate']:5.1f}% "
                f"[{100 * m['ci_low']:.1f}, {100 * m['ci_high']:.1f}] of {m['n']}, "
                f"{m['mean_calls']:.1f} calls, {m['mean_tokens']:.0f} tokens, "
                f"{m['mean_seconds']:.1f}s"
            )


@bench_app.command("game24")
def game24(
    range_: Annotated[
        str, typer.Option("--range", help="Data-set rows START:END (ToT's test set: 900:1000).")
    ] = "900:1000",
    every: Annotated[int, typer.Option(min=1, help="Keep every n-th puzzle of the range.")] = 1,
    methods: Annotated[
        str, typer.Option(help="Comma-separated: io,cot,cot-sc,tot-bfs,dfs,beam,astar,...")
    ] = "io,cot,cot-sc,tot-bfs,astar",
    model: Annotated[str, typer.Option(help="Model spec.")] = "embedded",
    budget_calls: Annotated[int, typer.Option(min=1, help="Cap on model calls per puzzle.")] = 60,
    budgets: Annotated[
        str | None, typer.Option(help="Budget curve, e.g. 10,20,40,60 (overrides --budget-calls).")
    ] = None,
    trials: Annotated[int, typer.Option(min=1, help="Trials per puzzle and method.")] = 1,
    executor: Annotated[str, typer.Option(help="local (default) or ray.")] = "local",
    ray_address: Annotated[
        str | None, typer.Option(help="Ray cluster address (default: start a local Ray).")
    ] = None,
    out_dir: Annotated[
        Path, typer.Option("--out", help="Results, traces, scorecard and plots go here.")
    ] = Path("runs/bench-game24"),
    name: Annotated[str, typer.Option(help="File name of the scorecard and plots.")] = "game24",
    store: StoreOption = None,
    quiet: Annotated[bool, typer.Option(help="No progress on stderr.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Game of 24 against Tree of Thoughts' baselines (IO, CoT, CoT-SC, ToT BFS)."""
    from guardsearch.experiments import ExperimentConfig

    try:
        config = ExperimentConfig.parse(
            {
                "name": name,
                "suite": "game24",
                "problems": {"range": range_, "every": every},
                "methods": _split(methods),
                "model": model,
                "budgets": _budgets(budgets, budget_calls),
                "trials": trials,
                "out": str(out_dir),
                "reference": _split(methods)[0] if _split(methods) else None,
            }
        )
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)
    _run(config, executor, ray_address, quiet, as_json, store)


@bench_app.command("run")
def run(
    config_file: Annotated[Path, typer.Argument(help="Experiment config (YAML).")],
    executor: Annotated[str, typer.Option(help="local (default) or ray.")] = "local",
    ray_address: Annotated[str | None, typer.Option(help="Ray cluster address.")] = None,
    store: StoreOption = None,
    quiet: Annotated[bool, typer.Option(help="No progress on stderr.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Run (or resume) an experiment described by a YAML file, then score it."""
    from guardsearch.experiments import ExperimentConfig

    try:
        config = ExperimentConfig.from_yaml(config_file)
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)
    _run(config, executor, ray_address, quiet, as_json, store)


def _stored(out_dir: Path, method: str, as_json: bool) -> list[Any]:
    from guardsearch.experiments import JsonlResults

    # One trial per key (the last stored), as before config fingerprints.
    by_key = {r.key: r for r in JsonlResults(out_dir).load() if r.method == method}
    results = list(by_key.values())
    if not results:
        fail(f"no stored trials of method {method!r} in {out_dir}", as_json=as_json)
    return results


@bench_app.command("tune")
def tune(
    out_dir: Annotated[Path, typer.Argument(help="An experiment's out directory.")],
    method: Annotated[str, typer.Option(help="The search method whose traces to read.")],
    suite: Annotated[str, typer.Option(help="Suite (for its node features).")] = "game24",
    high: Annotated[float, typer.Option(help="A 'high' score.")] = 0.7,
    low: Annotated[float, typer.Option(help="A 'low' score.")] = 0.4,
    report: Annotated[
        Path | None, typer.Option(help="Write PREFIX.md and PREFIX.json (default: in out_dir).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Heuristic tuning: misleading high scores, missed low scores, proposed weights."""
    import json

    from guardsearch.experiments import JsonlResults, resolve_suite
    from guardsearch.experiments.tuning import checks_as_features, tuning_markdown, tuning_report

    try:
        features = getattr(resolve_suite(suite), "node_features", checks_as_features)
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)
    results = _stored(out_dir, method, as_json)
    store = JsonlResults(out_dir)
    data = tuning_report(results, events_of=store.events, features=features, high=high, low=low)
    data["method"] = method
    data["rerun"] = {
        "label": f"{method}-tuned",
        "method": method,
        "options": {k: v for k, v in data["proposal"].items() if k in ("weights", "threshold")},
    }
    prefix = report or out_dir / f"tuning_{method}"
    prefix.parent.mkdir(parents=True, exist_ok=True)
    prefix.with_suffix(".json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    prefix.with_suffix(".md").write_text(
        tuning_markdown(data, f"Heuristic tuning: {method}"), encoding="utf-8"
    )
    if as_json:
        print_json(data)
    else:
        out.print(f"tuning report: {prefix.with_suffix('.md')}")
        out.print(f"re-run with: {json.dumps(data['rerun'])}")


@bench_app.command("distill")
def distill(
    out_dir: Annotated[Path, typer.Argument(help="An experiment's out directory.")],
    method: Annotated[str, typer.Option(help="The search method whose winning paths to use.")],
    write: Annotated[Path, typer.Option(help="Write the few-shot examples (JSON) here.")],
    examples: Annotated[int, typer.Option(min=1, help="How many examples.")] = 5,
    suite: Annotated[str, typer.Option(help="Suite (formats the examples).")] = "game24",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Distillation: winning paths -> few-shot examples for a linear method."""
    import json

    from guardsearch.experiments import resolve_suite
    from guardsearch.experiments.distill import pick, source_cost, winning_paths

    try:
        the_suite = resolve_suite(suite)
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)
    formatter = getattr(the_suite, "examples", None)
    if formatter is None:
        fail(f"suite {suite!r} cannot format examples", as_json=as_json)
    chosen = pick(winning_paths(_stored(out_dir, method, as_json), method), examples)
    if not chosen:
        fail(f"no winning paths of {method!r} in {out_dir}", code=1, as_json=as_json)
    write.parent.mkdir(parents=True, exist_ok=True)
    write.write_text(json.dumps(formatter(chosen), indent=2) + "\n", encoding="utf-8")
    payload = {**source_cost(chosen), "file": str(write)}
    if as_json:
        print_json(payload)
    else:
        out.print(
            f"{len(chosen)} examples -> {write} (from problems {', '.join(payload['problems'])}; "
            f"the search paid {payload['calls']} calls, {payload['tokens']} tokens)"
        )


@bench_app.command("pack")
def pack(
    out_dir: Annotated[Path, typer.Argument(help="An experiment's out directory.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Move a run's loose traces (traces/*.jsonl, the older layout) into traces.jsonl.gz."""
    from guardsearch.experiments.traces import ARCHIVE_NAME, pack_loose_traces

    try:
        counts = pack_loose_traces(out_dir)
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)
    payload = {**counts, "archive": str(out_dir / ARCHIVE_NAME)}
    if as_json:
        print_json(payload)
    else:
        out.print(f"{counts['packed'] + counts['unnamed']} traces -> {payload['archive']}")


bench_app.command("plan")(bench_plan)
