"""`guardsearch research "QUESTION"`: the research loop from the command line."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from guardsearch.cli.live_status import live_status
from guardsearch.cli.output import err, exit_for, fail, out, print_json, traced
from guardsearch.core.budget import Budget
from guardsearch.core.errors import GuardsearchError
from guardsearch.core.events import Event, Subscriber
from guardsearch.loops.research.config import ResearchConfig, default_budget
from guardsearch.loops.research.orchestrator import ResearchLoop
from guardsearch.loops.research.schemas import AgentResponse

# Exit codes by answer status (README: 0 verified, 3 unverified, 4 the sources do not
# say; 1 the run failed, 2 a usage error).
STATUS_EXIT = {"verified": 0, "unverified": 3, "not_found": 4}
STATUS_NOTES = {
    "unverified": "unverified: the guards could not confirm this answer from the sources",
    "not_found": "not found: the retrieved sources do not state the answer",
}


def _narrator(quiet: bool) -> Subscriber:
    def show(event: Event) -> None:
        if quiet or event.kind != "phase":
            return
        d = event.data
        phase = d.get("phase")
        if phase == "planned":
            err.print(f"[dim]plan ({d.get('tier')}): {'; '.join(d.get('queries') or [])}[/dim]")
        elif phase == "searched":
            err.print(f"[dim]search: {d.get('results')} sources so far[/dim]")
        elif phase == "reflected" and d.get("by") == "evidence":
            err.print(f"[dim]the sources state it: {', '.join(d.get('sources') or [])}[/dim]")
        elif phase == "reflected":
            err.print(
                f"[dim]reflect: sufficient={d.get('sufficient')} "
                f"confidence={d.get('confidence')}[/dim]"
            )
        elif phase == "hop":
            err.print(f"[dim]next hop: {'; '.join(d.get('queries') or [])}[/dim]")
        elif phase == "compact":
            err.print(f"[dim]compact: {d.get('reason')}[/dim]")
        elif phase in ("synthesize", "verified"):
            err.print(f"[dim]{phase}[/dim]")

    return show


def research(
    question: Annotated[str, typer.Argument(help="The question to research.")],
    tier: Annotated[
        str | None,
        typer.Option(
            help="auto | simple | standard | deep (default: $RESEARCH_TIER, else auto-detected)."
        ),
    ] = None,
    corpus: Annotated[
        str | None, typer.Option(help="Search only this named corpus (see `corpus list`).")
    ] = None,
    search: Annotated[
        list[str] | None,
        typer.Option(
            "--search",
            help="Search provider, repeatable, in fallback order: corpus, corpus:NAME, "
            "searxng:URL (default: corpus).",
        ),
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model spec (default: embedded).")] = None,
    max_iters: Annotated[int | None, typer.Option(min=1, help="Loop iterations.")] = None,
    max_queries: Annotated[int | None, typer.Option(min=1, help="Queries per iteration.")] = None,
    max_sources: Annotated[
        int | None, typer.Option(min=1, help="New sources per iteration.")
    ] = None,
    max_time: Annotated[
        float | None, typer.Option("--max-time", min=1, help="Seconds the loop may take.")
    ] = None,
    token_budget: Annotated[int | None, typer.Option(min=500, help="Token budget.")] = None,
    support: Annotated[
        str | None, typer.Option(help="Claim support check: lexical (default) | model | off.")
    ] = None,
    trace: Annotated[Path | None, typer.Option(help="Append the event trace (JSONL).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress on stderr.")] = False,
) -> None:
    """Plan, search, reflect and answer with citations verified against the sources."""
    if not question.strip():
        fail("the question is empty", as_json=as_json)
    try:
        from guardsearch.models.spec import model_from_spec
        from guardsearch.tools.spec import providers_from_specs

        specs = list(search or ["corpus"])
        if corpus is not None:
            specs = [f"corpus:{corpus}" if s == "corpus" else s for s in specs]
        config = ResearchConfig.from_env().with_options(
            tier=tier,
            max_iters=max_iters,
            max_queries=max_queries,
            max_sources=max_sources,
            support=support,
        )
        budget = Budget.of(default_budget(), tokens=token_budget, seconds=max_time)
        loop = ResearchLoop(
            model=model_from_spec(model), providers=providers_from_specs(specs), config=config
        )
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)
    with (
        traced(_narrator(quiet or as_json), trace) as events,
        live_status(events, "research", budget=budget, quiet=quiet, as_json=as_json),
    ):
        run = asyncio.run(loop.run(question, budget=budget, trace=events))
    response = run.response
    if as_json:
        print_json(response.model_dump(mode="json", exclude_none=True))
    elif isinstance(response, AgentResponse):
        out.print(response.final_answer, soft_wrap=True, markup=False)
        if response.status != "verified":
            err.print(f"[yellow]{STATUS_NOTES[response.status]}[/yellow]")
            for verdict in response.verdicts:
                err.print("  ", verdict, soft_wrap=True, markup=False)
            if response.draft:
                err.print("  the model's draft: ", response.draft, soft_wrap=True, markup=False)
        if response.sources:
            out.print("\nSources:")
            for s in response.sources:
                licence = f" ({s.license})" if s.license else ""
                out.print(
                    f"  {s.id} {s.title}: {s.location}{licence}", soft_wrap=True, markup=False
                )
        dropped = response.citations.hallucinated + response.citations.unsupported
        if dropped:
            err.print(f"[yellow]dropped citations:[/yellow] {', '.join(dropped)}")
        for claim in response.citations.removed_claims:
            err.print("[yellow]removed unsupported claim:[/yellow] ", end="")
            err.print(claim, soft_wrap=True, markup=False)
        err.print(
            f"[dim]{response.iterations} iteration(s), {response.usage.calls} model calls, "
            f"{response.usage.total_tokens} tokens, {run.seconds:.1f}s, "
            f"stop: {response.stop_reason}[/dim]"
        )
    else:
        err.print(f"[red]{response.error.type}:[/red] {response.error.message}")
    if isinstance(response, AgentResponse):
        raise typer.Exit(STATUS_EXIT[response.status])
    raise typer.Exit(1)
