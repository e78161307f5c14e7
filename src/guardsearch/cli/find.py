"""`guardsearch find "REQUEST"`: the plan/act/review loop over the embedded corpus."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer

from guardsearch.cli.live_status import live_status
from guardsearch.cli.output import err, exit_for, fail, out, print_json, traced
from guardsearch.core.budget import Budget
from guardsearch.core.errors import GuardsearchError
from guardsearch.core.events import Event, Subscriber
from guardsearch.loops.review import ReviewConfig, ReviewRun, write_transcript


def _narrator(quiet: bool) -> Subscriber:
    def show(event: Event) -> None:
        if quiet or event.kind != "phase" or event.step != "review":
            return
        d = event.data
        phase = d.get("phase")
        if phase == "planned":
            err.print(
                f"[dim]plan ({d.get('domain')}, threshold {d.get('threshold')}): "
                f"{d.get('reflection', {}).get('plan')}[/dim]"
            )
        elif phase == "reviewed":
            r = d.get("quality_report", {})
            err.print(
                f"[dim]attempt {d.get('attempt')}: {r.get('verified')}/{r.get('total_fetched')} "
                f"verified, quality {r.get('quality_score')}, "
                f"rejected {r.get('rejection_breakdown')}[/dim]"
            )
        elif phase == "refine":
            why = " learned from earlier runs" if d.get("learned") else ""
            err.print(
                f"[dim]refine ({d.get('level')}{why}): "
                f"{d.get('refinement', {}).get('reason')}[/dim]"
            )

    return show


def find_payload(run: ReviewRun, min_items: int) -> dict[str, Any]:
    """The `--json` contract: the run's `as_dict` (items, attempts, stop reason, usage,
    ...), with `ok` (enough items), a quality report per attempt and the calls."""
    return {
        **run.as_dict(),
        "ok": len(run.items) >= min_items,
        "quality_report": [a.report.model_dump() for a in run.attempts],
        "calls": run.usage.calls,
        "error": run.error or None,
    }


def find(
    request: Annotated[
        str, typer.Argument(help='What to find, e.g. "paintings by impressionist painters".')
    ],
    min_items: Annotated[int, typer.Option("--min", min=1, help="Verified items wanted.")] = 3,
    model: Annotated[str | None, typer.Option(help="Model spec (default: embedded).")] = None,
    max_attempts: Annotated[int, typer.Option(min=1, help="Act/review attempts.")] = 4,
    max_calls: Annotated[int, typer.Option(min=1, help="Model call budget.")] = 40,
    threshold: Annotated[
        float | None,
        typer.Option(min=0.0, max=1.0, help="Quality threshold (default: per domain)."),
    ] = None,
    judge: Annotated[bool, typer.Option(help="Ask the model judge after the rules.")] = True,
    transcript: Annotated[
        Path | None, typer.Option(help="Write the run's transcript (JSON).")
    ] = None,
    trace: Annotated[Path | None, typer.Option(help="Append the event trace (JSONL).")] = None,
    history: Annotated[
        Path | None,
        typer.Option(
            "--history",
            metavar="FILE.json",
            help="Refinement history to learn from and add this run to (JSON).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress on stderr.")] = False,
) -> None:
    """Find items of one kind that match a condition, reviewing and refining the search."""
    from guardsearch.apps.find import find as find_items
    from guardsearch.loops.review import DomainThresholds

    try:
        if not request.strip():
            raise GuardsearchError("the request is empty")
        from guardsearch.models.spec import model_from_spec

        thresholds = DomainThresholds()
        if threshold is not None:
            thresholds = DomainThresholds(dict.fromkeys(thresholds.values, threshold), threshold)
        config = ReviewConfig(max_attempts=max_attempts, min_items=min_items, thresholds=thresholds)
        budget = Budget.of(calls=max_calls)
        backend = model_from_spec(model)
    except GuardsearchError as exc:
        fail(str(exc), 2 if not request.strip() else exit_for(exc), as_json=as_json)
    with (
        traced(_narrator(quiet or as_json), trace) as events,
        live_status(events, "find", budget=budget, quiet=quiet, as_json=as_json),
    ):
        try:
            run = asyncio.run(
                find_items(
                    request,
                    model=backend,
                    budget=budget,
                    min_items=min_items,
                    config=config,
                    use_judge=judge,
                    trace=events,
                    history=history,
                )
            )
            if transcript is not None:
                write_transcript(run, transcript)
        except GuardsearchError as exc:
            fail(str(exc), exit_for(exc), as_json=as_json)
    payload = find_payload(run, min_items)
    if as_json:
        print_json(payload)
    else:
        out.print(run.answer, soft_wrap=True, markup=False)
        err.print(
            f"[dim]{len(run.attempts)} attempt(s), {run.usage.calls} model calls, "
            f"{run.seconds:.1f}s, stop: {run.stop_reason}[/dim]"
        )
    raise typer.Exit(0 if payload["ok"] else 1)
