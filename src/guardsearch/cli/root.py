"""The root of the `guardsearch` command line: its group, options and command table.

Each command's module is imported when that command runs, not before: `guardsearch
--help` imports none of them (nor the search, the models or the loops), so it answers
at once (benchmarks/startup.py measures it). The root `--help` lists the commands from
`COMMANDS`, whose one-line help `tests/unit/test_cli.py` checks against each command's
own.
"""

from __future__ import annotations

from importlib import import_module
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from guardsearch.cli.errors import OneLineErrors

# name -> (module, attribute, one-line help), in the order `--help` lists them.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "ask": (
        "guardsearch.cli.ask",
        "ask",
        "Ask the model once, guarded: parse, check, retry with feedback up to --rmax.",
    ),
    "models": (
        "guardsearch.cli.models_cmd",
        "models",
        "List model backends, the embedded model's status and its llama.cpp settings.",
    ),
    "research": (
        "guardsearch.cli.research",
        "research",
        "Plan, search, reflect and answer with citations verified against the sources.",
    ),
    "find": (
        "guardsearch.cli.find",
        "find",
        "Find items of one kind that match a condition, reviewing and refining the search.",
    ),
    "probe": (
        "guardsearch.cli.probe",
        "probe",
        "Search the corpus with a model planner around a deterministic probe policy.",
    ),
    "serve": (
        "guardsearch.cli.serve",
        "serve",
        "Serve POST /run, /run-simple, /search, GET /runs/{id}, /metrics, /healthz, /docs,",
    ),
    "plan": (
        "guardsearch.cli.plan",
        "plan",
        "Plan a task as analysis -> recon -> strategy -> plan, backtracking on guard feedback.",
    ),
    "solve": (
        "guardsearch.cli.solve",
        "solve",
        'Solve one problem of an app: guardsearch solve game24 "4 5 6 10".',
    ),
    "corpus": (
        "guardsearch.cli.corpus",
        "corpus_app",
        "Offline corpora: the embedded Wikipedia summaries and your own files.",
    ),
    "runs": (
        "guardsearch.cli.runs",
        "runs_app",
        "Durable runs: start, list, show, export, view, resume, cancel.",
    ),
    "apps": (
        "guardsearch.cli.apps",
        "apps",
        "List the registered apps: what durable runs, POST /solve and bench can run by name.",
    ),
    "lock": (
        "guardsearch.cli.lock",
        "lock",
        "Write guardsearch.lock: prompt hashes, config, model spec + weights, version.",
    ),
    "bench": (
        "guardsearch.cli.bench",
        "bench_app",
        "Benchmarks: run methods over problems, score them (resumable).",
    ),
}


def load_command(name: str) -> Any:
    """The click command `name` (its module imported now), as `app.command()` makes it."""
    module_name, attribute, _ = COMMANDS[name]
    module = import_module(module_name)
    found = getattr(module, attribute)
    if isinstance(found, typer.Typer):
        group = typer.main.get_group(found)
        group.name = name
        return group
    holder = typer.Typer(add_completion=False)
    # A module may name the click class of its command (solve: NumbersArgument).
    holder.command(name=name, cls=getattr(module, "COMMAND_CLASS", None))(found)
    return typer.main.get_command(holder)


class LazyCommands(OneLineErrors):
    """The root group: commands load when they run; the listing needs none of them."""

    _listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in COMMANDS:
            return None
        if self._listing:  # `--help`: the name and its line, no import
            return TyperCommand(name=cmd_name, help=COMMANDS[cmd_name][2])
        return load_command(cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        type(self)._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            type(self)._listing = False


app = typer.Typer(
    cls=LazyCommands,
    name="guardsearch",
    help="Run LLM work as searches and loops steered by guard feedback.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,  # the root help in plain click: no rich to import for it
)


def _version(value: bool) -> None:
    if value:
        from guardsearch import __version__

        typer.echo(f"guardsearch {__version__}")
        raise typer.Exit()


def _otel(value: bool) -> None:
    if value:
        from guardsearch import otel
        from guardsearch.core.errors import ConfigError

        try:
            otel.enable()
        except ConfigError as exc:
            raise typer.BadParameter(str(exc)) from None


@app.callback()
def root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show version.")
    ] = False,
    otel: Annotated[
        bool,
        typer.Option(
            "--otel",
            callback=_otel,
            help="Send OpenTelemetry traces of what the command runs over OTLP/HTTP "
            "($OTEL_EXPORTER_OTLP_ENDPOINT, default http://localhost:4318; "
            "docs/observability.md). Needs guardsearch[otel].",
        ),
    ] = False,
) -> None:
    """guardsearch: searches and loops steered by guard feedback, within hard budgets."""
