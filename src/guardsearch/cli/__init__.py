"""The `guardsearch` command line (typer + rich)."""

from __future__ import annotations

from typing import Annotated

import typer

from guardsearch.cli.apps import apps, start
from guardsearch.cli.ask import ask
from guardsearch.cli.bench import bench_app
from guardsearch.cli.corpus import corpus_app
from guardsearch.cli.errors import OneLineErrors
from guardsearch.cli.find import find
from guardsearch.cli.lock import lock
from guardsearch.cli.models_cmd import models
from guardsearch.cli.plan import plan
from guardsearch.cli.probe import probe
from guardsearch.cli.research import research
from guardsearch.cli.runs import runs_app
from guardsearch.cli.serve import serve
from guardsearch.cli.solve import NumbersArgument, solve

app = typer.Typer(
    cls=OneLineErrors,
    name="guardsearch",
    help="Run LLM work as searches and loops steered by guard feedback.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
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


app.command()(ask)
app.command()(models)
app.command()(research)
app.command()(find)
app.command()(probe)
app.command()(serve)
app.command()(plan)
app.command(cls=NumbersArgument)(solve)
app.add_typer(corpus_app, name="corpus")
runs_app.command()(start)
app.add_typer(runs_app, name="runs")
app.command()(apps)
app.command()(lock)
app.add_typer(bench_app, name="bench")


def main() -> None:
    app()
