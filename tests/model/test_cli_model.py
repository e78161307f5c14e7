"""The README's must-show commands, on the real embedded model, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from guardsearch.apps.game24 import check_answer, parse_numbers
from guardsearch.cli import app

pytestmark = pytest.mark.model
pytest.importorskip("llama_cpp")

runner = CliRunner()
SCHEMA = Path(__file__).parents[2] / "examples" / "colours.schema.json"


def test_ask_with_a_schema_returns_schema_valid_json() -> None:
    result = runner.invoke(
        app, ["ask", "List three primary colours", "--schema", str(SCHEMA), "--json"]
    )
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["ok"] is True
    jsonschema.validate(payload["value"], json.loads(SCHEMA.read_text()))
    assert payload["usage"]["prompt_tokens"] > 0
    assert payload["usage"]["completion_tokens"] > 0


def test_solve_game24_finds_an_expression_for_4_5_6_10() -> None:
    result = runner.invoke(app, ["solve", "game24", "4 5 6 10", "--json", "--quiet"])
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["succeeded"] is True
    assert check_answer(parse_numbers("4 5 6 10"), payload["answer"]) is None
    assert payload["termination"] == "success"
    assert payload["calls"] <= 40
