"""The `guardsearch` command line (typer + rich)."""

from __future__ import annotations

from typing import Annotated

import typer

from guardsearch.cli.ask import ask
from guardsearch.cli.corpus import corpus_app
from guardsearch.cli.models_cmd import models
from guardsearch.cli.research import research
from guardsearch.cli.serve import serve
from guardsearch.cli.solve import solve_app

app = typer.Typer(
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


@app.callback()
def root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show version.")
    ] = False,
) -> None:
    """guardsearch: searches and loops steered by guard feedback, within hard budgets."""


app.command()(ask)
app.command()(models)
app.command()(research)
app.command()(serve)
app.add_typer(solve_app, name="solve")
app.add_typer(corpus_app, name="corpus")


def main() -> None:
    app()
