"""`guardsearch probe` from the shell: the JSON contract, the baseline, the timeline PNG."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from guardsearch.cli.probe import probe

PLAN = {"keywords": ["French", "painter"], "extra": ["impressionism"], "kind": "painter"}
EVALUATION = {"satisfied": True, "reason": "French painters"}


@pytest.fixture(scope="module")
def shared_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("probe-home")


@pytest.fixture(autouse=True)
def home(shared_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One home for the module: the Wikipedia index is built once."""
    monkeypatch.setenv("GUARDSEARCH_HOME", str(shared_home))
    return shared_home


def cli() -> typer.Typer:
    app = typer.Typer()
    app.command()(probe)
    app.command()(lambda: None)
    return app


def spec(tmp_path: Path) -> str:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps([json.dumps(PLAN), json.dumps(EVALUATION)]))
    return f"scripted:{path}"


def test_probe_json_reports_results_both_budgets_and_the_timeline(tmp_path: Path) -> None:
    png = tmp_path / "timeline.png"
    result = CliRunner().invoke(
        cli(),
        ["probe", "French painters", "--model", spec(tmp_path), "--json", "--timeline", str(png)],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["mode"] == "probe"
    assert list(payload)[:5] == ["succeeded", "stop_reason", "run_id", "usage", "seconds"]
    assert payload["succeeded"] and payload["usage"]["calls"] == 2
    assert payload["steering"]["outputs"] >= 1 and payload["steering"]["repeats"] == 0
    assert 1 <= len(payload["results"]) <= 10
    assert sum("painter" in r["description"].lower() for r in payload["results"]) >= 8
    assert payload["budget"]["outer"]["used_calls"] == payload["llm_calls"] == 2
    assert payload["budget"]["inner"]["used_probes"] == payload["probe_calls"] >= 1
    layers = {e["layer"] for e in payload["timeline"]}
    assert layers == {"outer", "inner"}
    assert payload["timeline_png"] == str(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_probe_baseline_is_one_query_one_search(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli(), ["probe", "French painters", "--baseline", "--model", spec(tmp_path), "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["mode"] == "baseline"
    assert payload["probe_calls"] == 1 and payload["llm_calls"] == 2
    assert payload["stop_reasons"] == ["single_search"]
    assert payload["stop_reason"] == "single_search" and payload["usage"]["calls"] == 2


def test_probe_usage_errors_exit_2(tmp_path: Path) -> None:
    bad = CliRunner().invoke(
        cli(), ["probe", "x", "--model", spec(tmp_path), "--timeline", "t.svg", "--json"]
    )
    assert bad.exit_code == 2 and "png" in json.loads(bad.stdout)["error"]
    empty = CliRunner().invoke(cli(), ["probe", "  ", "--model", spec(tmp_path)])
    assert empty.exit_code == 2
