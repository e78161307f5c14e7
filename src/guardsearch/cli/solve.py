"""`guardsearch solve APP PROBLEM`: one problem of any registered app, from the command line.

The app supplies what is its own (guardsearch/registry.py: the problem parser, the
space, the answer check, how the answer prints); this command is the same for every
app, so a new app needs no CLI code (`guardsearch apps` lists them).
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from guardsearch.cli.live_status import live_status
from guardsearch.cli.options import AsJson, BudgetCalls, ModelSpec, Quiet, TraceFile
from guardsearch.cli.output import err, exit_for, fail, out, print_json, progress_printer, traced
from guardsearch.core.budget import Budget
from guardsearch.core.errors import ConfigError, GuardsearchError

# The strategies, named here so that `--help` needs no import of the search package
# (tests/unit/test_cli.py checks the list against the registry).
STRATEGIES = ("astar", "beam", "best_first", "bfs", "consensus", "dfs", "program", "refine")

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


def solve(
    app: Annotated[str, typer.Argument(help="A registered app (guardsearch apps), e.g. game24.")],
    problem: Annotated[
        str,
        typer.Argument(help='The problem: the app\'s own form ("4 5 6 10") or a JSON object.'),
    ],
    strategy: Annotated[
        str | None,
        typer.Option(help=f"Search strategy: {' | '.join(STRATEGIES)} (default: the app's)."),
    ] = None,
    model: ModelSpec = None,
    budget_calls: BudgetCalls = 40,
    budget_tokens: Annotated[int | None, typer.Option(min=1, help="Cap on tokens.")] = None,
    seconds: Annotated[float | None, typer.Option(help="Wall-clock deadline.")] = None,
    value: Annotated[
        bool,
        typer.Option(
            help="Add the app's LLM value evaluator to h (game24: sure/likely/impossible)."
        ),
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
    trace: TraceFile = None,
    quiet: Quiet = False,
    as_json: AsJson = False,
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
    """Solve one problem of an app: guardsearch solve game24 "4 5 6 10"."""
    from guardsearch.apps.solve import solution

    found, parsed, chosen = _checked(app, problem, strategy, value, as_json)
    full = {**parsed, **{flag: value for flag in found.flags if flag == "value"}}
    given = {
        "width": width,
        "temperature": temperature,
        "samples": samples,
        "concurrency": concurrency,
    }
    options: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    budget = {"calls": budget_calls, "tokens": budget_tokens, "seconds": seconds}
    if durable or locked:
        from guardsearch.cli.durable_solve import solve_durably

        solve_durably(
            app=found.name,
            problem=full,
            strategy=chosen,
            model=model,
            budget=budget,
            options=options,
            store=store,
            name=name,
            locked=locked,
            quiet=quiet,
            as_json=as_json,
        )
    title = f"solve {found.name} {problem} · {chosen}"
    result, model_name = _run(
        found.name, title, full, chosen, model, budget, options, trace, quiet, as_json
    )
    _report(found, result, solution(result, model=model_name, echo=parsed), quiet, as_json)


def _checked(
    app: str, problem: str, strategy: str | None, value: bool, as_json: bool
) -> tuple[Any, dict[str, Any], str]:
    """(the app, its problem object, the strategy), or a one-line error: an unknown app
    or strategy, a problem the app cannot read, a flag the app does not take."""
    from guardsearch.apps.solve import problem_of
    from guardsearch.registry import get_app

    try:
        found = get_app(app)
        parsed = problem_of(found, problem)
        chosen = found.strategy if strategy is None else strategy
        if chosen not in STRATEGIES:
            from guardsearch.search.strategies.base import get_strategy

            get_strategy(chosen)  # a strategy registered by a plugin, or a ConfigError
        if value and "value" not in found.flags:
            raise ConfigError(f"app {found.name!r} has no value evaluator (--value)")
    except ConfigError as exc:
        fail(str(exc), as_json=as_json)
    return found, parsed, chosen


def _run(
    app: str,
    title: str,
    problem: dict[str, Any],
    strategy: str,
    model: str | None,
    budget: dict[str, Any],
    options: dict[str, Any],
    trace: Path | None,
    quiet: bool,
    as_json: bool,
) -> tuple[Any, str]:
    """The solve in this process under a live status: the SearchResult, the model's name."""
    from guardsearch.apps import solve as solving

    with traced(progress_printer(quiet), trace) as events:
        try:
            limits = Budget.of(**budget)
            the_model = solving.load_model(model)
            with live_status(events, title, budget=limits, quiet=quiet, as_json=as_json):
                result = asyncio.run(
                    solving.solve_app(
                        app,
                        problem,
                        strategy=strategy,
                        model=the_model,
                        budget=limits,
                        trace=events,
                        **options,
                    )
                )
        except GuardsearchError as exc:
            fail(str(exc), exit_for(exc), as_json=as_json)
    return result, the_model.name


def _report(app: Any, result: Any, payload: dict[str, Any], quiet: bool, as_json: bool) -> None:
    """Print a solve (one JSON object, or the answer on stdout and the path on stderr);
    exit 0 when solved, 1 when not (with what pruned the candidates)."""
    from guardsearch.apps.solve import shown

    if as_json:
        print_json(payload)
    elif payload["succeeded"]:
        out.print(shown(app, payload["answer"]), markup=False)
        for line in payload["path"]:
            err.print(f"  {line}", style="dim", markup=False)
    else:
        err.print(f"[red]not solved:[/red] {payload['termination']}")
        for guard, what in result.pruned.items():
            err.print(f"  pruned by {guard}: {len(what)}, e.g. {what[0]}", markup=False)
    if not quiet:
        err.print(
            f"[dim]{payload['strategy']}: {payload['calls']} calls, {payload['tokens']} tokens, "
            f"{payload['seconds']:.1f}s, termination {payload['termination']}[/dim]"
        )
    raise typer.Exit(0 if payload["succeeded"] else 1)


COMMAND_CLASS = NumbersArgument  # the class cli/__init__.py builds `solve` with
