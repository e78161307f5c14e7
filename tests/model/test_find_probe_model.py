"""`find` and `probe` on the real embedded model (slow; run with `pytest -m model`)."""

from __future__ import annotations

import json
import re

import pytest
import typer
from typer.testing import CliRunner

from guardsearch.cli.find import find
from guardsearch.cli.probe import probe

pytestmark = pytest.mark.model


def cli() -> typer.Typer:
    app = typer.Typer()
    app.command()(find)
    app.command()(probe)
    return app


def test_find_impressionist_paintings_returns_paintings_with_a_visible_refinement() -> None:
    # the corpus holds one work by an Impressionist (Monet's Water Lilies); Seurat and
    # Van Gogh were Post-Impressionists and must not count
    result = CliRunner().invoke(
        cli(), ["find", "paintings by impressionist painters", "--min", "1", "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    items = payload["items"]
    assert len(items) >= 1
    for item in items:  # each is a painting (an attributed work), not a painter or a technique
        assert re.search(r"\bpaintings?\b.*\b(by|attributed to)\b", item["description"], re.I)
        assert not re.search(r"Seurat|van Gogh", item["description"], re.I)
    first = payload["quality_report"][0]
    if not first["meets_threshold"]:
        assert first["suggested_refinement"] is not None
        assert len(payload["attempts"]) >= 2
        assert payload["attempts"][1]["applied_refinement"] is not None
    assert payload["calls"] >= 2


def test_probe_french_painters_uses_two_or_three_model_calls() -> None:
    result = CliRunner().invoke(cli(), ["probe", "French painters", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert 2 <= payload["llm_calls"] <= 3
    relevant = [
        r for r in payload["results"] if re.search(r"french.*painter", r["description"], re.I)
    ]
    assert len(relevant) >= 5
