"""`guardsearch corpus remove` reports like every other corpus command."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from guardsearch.cli.corpus import corpus_app

runner = CliRunner()


def cli() -> typer.Typer:
    app = typer.Typer()
    app.add_typer(corpus_app, name="corpus")
    return app


def test_corpus_remove_json_names_the_corpus_and_the_documents_removed(tmp_path: Path) -> None:
    (tmp_path / "kiwi.md").write_text("# Kiwi\n\nThe kiwi is a flightless bird.")
    added = runner.invoke(cli(), ["corpus", "add", str(tmp_path), "--name", "birds", "--json"])
    assert added.exit_code == 0, added.output
    removed = runner.invoke(cli(), ["corpus", "remove", "birds", "--json"])
    assert removed.exit_code == 0, removed.output
    assert json.loads(removed.stdout) == {"corpus": "birds", "removed": 1}
    again = runner.invoke(cli(), ["corpus", "remove", "birds", "--json"])
    assert again.exit_code != 0
    assert "no corpus named 'birds'" in json.loads(again.stdout)["error"]
