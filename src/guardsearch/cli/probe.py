"""`guardsearch probe "TOPIC"`: the inner/outer loop (or its baseline) over the corpus."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from guardsearch.cli.live_status import live_status
from guardsearch.cli.output import EXIT_FAILED, err, exit_for, fail, out, print_json, traced
from guardsearch.core.budget import Budget
from guardsearch.core.errors import ConfigError, GuardsearchError
from guardsearch.core.events import Event, Subscriber


def _narrator(quiet: bool) -> Subscriber:
    def show(event: Event) -> None:
        if quiet or event.kind != "phase" or event.step != "inner_outer":
            return
        d = event.data
        if d.get("layer") == "outer" and d.get("status") == "done":
            err.print(f"[dim]outer: {d.get('phase')} (model calls {d.get('outer_used')})[/dim]")
        elif d.get("phase") == "step":
            query = d.get("chosen") or d.get("query")
            err.print(
                f"[dim]inner {d.get('index')}: {d.get('move')} -> {query} "
                f"({d.get('count')} hits)[/dim]"
            )
        elif d.get("phase") == "stop":
            err.print(f"[dim]inner stop: {d.get('reason')}[/dim]")

    return show


def probe(
    topic: Annotated[str, typer.Argument(help='What to search for, e.g. "French painters".')],
    baseline: Annotated[
        bool, typer.Option("--baseline", help="One model-written query, no inner loop.")
    ] = False,
    timeline: Annotated[
        Path | None, typer.Option(help="Draw the dual-layer timeline into FILE.png.")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model spec (default: embedded).")] = None,
    outer_calls: Annotated[int, typer.Option(min=1, help="Outer (model) call budget.")] = 3,
    inner_probes: Annotated[int, typer.Option(min=1, help="Inner probe-call budget.")] = 12,
    max_results: Annotated[int, typer.Option(min=1, help="Results to return.")] = 10,
    trace: Annotated[Path | None, typer.Option(help="Append the event trace (JSONL).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress on stderr.")] = False,
) -> None:
    """Search the corpus with a model planner around a deterministic probe policy."""
    from guardsearch.apps.probe import probe as run_probe
    from guardsearch.loops.inner_outer import draw_timeline

    try:
        if not topic.strip():
            raise ConfigError("the topic is empty")
        if timeline is not None and timeline.suffix.lower() != ".png":
            raise ConfigError(f"--timeline needs a .png file, not {timeline}")
        from guardsearch.models.spec import model_from_spec

        backend = model_from_spec(model)
        outer, inner = Budget.of(calls=outer_calls), Budget.of(calls=inner_probes)
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)
    with (
        traced(_narrator(quiet or as_json), trace) as events,
        live_status(events, f"probe {topic}", budget=outer, quiet=quiet, as_json=as_json),
    ):
        try:
            run = asyncio.run(
                run_probe(
                    topic,
                    model=backend,
                    baseline=baseline,
                    budget=outer,
                    inner_budget=inner,
                    trace=events,
                    max_results=max_results,
                )
            )
            drawn = (
                draw_timeline(run.timeline, timeline, title=f"{run.mode}: {topic}")
                if timeline
                else None
            )
        except GuardsearchError as exc:
            fail(str(exc), exit_for(exc), as_json=as_json)
    payload = run.as_dict()
    payload["timeline_png"] = str(drawn) if drawn else None
    if as_json:
        print_json(payload)
    else:
        for i, hit in enumerate(run.results, 1):
            about = f" ({hit.description})" if hit.description else ""
            out.print(f"{i}. {hit.title}{about}: {hit.location}", soft_wrap=True, markup=False)
        b = run.budget.as_dict()
        err.print(
            f"[dim]{run.mode}: outer {b['outer']['used_calls']}/{b['outer']['limit_calls']} model "
            f"calls; inner {b['inner']['used_probes']}/{b['inner']['limit_probes']} probe calls, "
            f"{b['inner']['used_steps']} steps, {b['inner']['memo_hits']} memo hits; "
            f"{run.seconds:.1f}s; stop: {', '.join(run.stop_reasons)}[/dim]"
        )
        if drawn:
            err.print(f"[dim]timeline: {drawn}[/dim]")
    if run.error is not None and not as_json:  # (--json: `succeeded` false and `error`)
        fail(f"the model never answered: {run.error}", EXIT_FAILED)
    raise typer.Exit(0 if run.succeeded else 1)
