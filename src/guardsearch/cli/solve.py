"""`guardsearch solve PROBLEM ...`: packaged search problems from the command line."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from guardsearch.cli.live_status import live_status
from guardsearch.cli.output import err, exit_for, fail, out, print_json, progress_printer, traced
from guardsearch.core.budget import Budget
from guardsearch.core.errors import GuardsearchError
from guardsearch.search import strategy_names

solve_app = typer.Typer(
    help="Solve a packaged search problem with any strategy.", no_args_is_help=True
)

# A puzzle that starts with a negative number ("-1 2 3 4") looks like an option.
_NEGATIVE_NUMBERS = re.compile(r"-[0-9.][0-9.,/eE+\s-]*")


class NumbersArgument(TyperCommand):
    """A command whose argument may start with '-': `solve game24 "-1 2 3 4"`.

    A word that reads as negative numbers, and is not the value of an option before
    it, is moved behind a `--`, where it can only be the argument."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if "--" not in args:
            valued = {
                name
                for param in self.params
                if not getattr(param, "is_flag", True)
                for name in getattr(param, "opts", ())
            }
            moved = [
                i
                for i, a in enumerate(args)
                if _NEGATIVE_NUMBERS.fullmatch(a) and not (i and args[i - 1] in valued)
            ]
            if moved:
                words = [args[i] for i in moved]
                args = [a for i, a in enumerate(args) if i not in moved] + ["--", *words]
        return super().parse_args(ctx, args)


@solve_app.command("game24", cls=NumbersArgument)
def game24(
    numbers: Annotated[str, typer.Argument(help='The puzzle, e.g. "4 5 6 10".')],
    strategy: Annotated[
        str, typer.Option(help=f"Search strategy: {' | '.join(strategy_names())}.")
    ] = "astar",
    model: Annotated[str | None, typer.Option(help="Model spec (default: embedded).")] = None,
    budget_calls: Annotated[int, typer.Option(min=1, help="Cap on model calls.")] = 40,
    budget_tokens: Annotated[int | None, typer.Option(min=1, help="Cap on tokens.")] = None,
    seconds: Annotated[float | None, typer.Option(help="Wall-clock deadline.")] = None,
    value: Annotated[
        bool, typer.Option(help="Add the LLM value evaluator (sure/likely/impossible) to h.")
    ] = False,
    width: Annotated[int | None, typer.Option(min=1, help="Beam width (beam/bfs/astar).")] = None,
    temperature: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=2.0,
            help="Sampling temperature of the proposer (default 0; consensus: 0.7, so its "
            "candidates differ).",
        ),
    ] = None,
    samples: Annotated[
        int | None,
        typer.Option(min=1, help="Proposer calls per expansion, each with its own seed."),
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Model calls at once (an expansion's samples, its judging; consensus "
            "rounds). Same answer as 1; pays off with a server that batches (vLLM, "
            "OpenAI-compatible), not with the embedded model, which runs one call at a time.",
        ),
    ] = None,
    trace: Annotated[Path | None, typer.Option(help="Append the event trace (JSONL).")] = None,
    quiet: Annotated[bool, typer.Option(help="No progress on stderr.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    durable: Annotated[
        bool, typer.Option("--durable", help="Run as a durable run (resumable; see `runs`).")
    ] = False,
    store: Annotated[
        str | None, typer.Option(help="Run store for --durable (default $GUARDSEARCH_DB).")
    ] = None,
    name: Annotated[str, typer.Option(help="A name for the durable run.")] = "",
    locked: Annotated[
        bool, typer.Option("--locked", help="Refuse unless the solver matches guardsearch.lock.")
    ] = False,
) -> None:
    """Game of 24: combine the numbers with + - * / to reach 24, each used once."""
    from guardsearch.apps.game24 import solve_game24

    if strategy not in strategy_names():
        fail(
            f"unknown strategy {strategy!r}; choose one of {', '.join(strategy_names())}",
            as_json=as_json,
        )
    given = {
        "width": width,
        "temperature": temperature,
        "samples": samples,
        "concurrency": concurrency,
    }
    options: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    if durable or locked:
        from guardsearch.cli.durable_solve import solve_durably

        solve_durably(
            app="game24",
            problem={"numbers": numbers, "value": value},
            strategy=strategy,
            model=model,
            budget={"calls": budget_calls, "tokens": budget_tokens, "seconds": seconds},
            options=options,
            store=store,
            name=name,
            locked=locked,
            quiet=quiet,
            as_json=as_json,
        )
    title = f"solve game24 {numbers} · {strategy}"
    with traced(progress_printer(quiet), trace) as events:
        try:
            budget = Budget.of(calls=budget_calls, tokens=budget_tokens, seconds=seconds)
            with live_status(events, title, budget=budget, quiet=quiet, as_json=as_json):
                result = asyncio.run(
                    solve_game24(
                        numbers,
                        strategy=strategy,
                        model=model,
                        budget=budget,
                        value=value,
                        trace=events,
                        **options,
                    )
                )
        except GuardsearchError as exc:
            fail(str(exc), exit_for(exc), as_json=as_json)
    if as_json:
        print_json(result)
    elif result["succeeded"]:
        out.print(f"{result['answer']} = 24")
        for line in result["path"]:
            err.print(f"[dim]  {line}[/dim]")
    else:
        err.print(f"[red]not solved:[/red] {result['termination']}")
    if not quiet:
        err.print(
            f"[dim]{result['strategy']}: {result['calls']} calls, {result['tokens']} tokens, "
            f"{result['seconds']:.1f}s, termination {result['termination']}[/dim]"
        )
    raise typer.Exit(0 if result["succeeded"] else 1)
