"""`guardsearch runs view`: a run as one HTML page (tree, winning path, events)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from guardsearch.cli import app
from guardsearch.viewer import render_run

runner = CliRunner()


def solved_run(tmp_path: Path) -> dict[str, object]:
    answers = tmp_path / "answers.json"
    answers.write_text(
        json.dumps(['{"steps": ["5 * 6"]}', '{"steps": ["30 - 10"]}', '{"steps": ["4 + 20"]}'])
    )
    result = runner.invoke(
        app,
        [
            "solve",
            "game24",
            "4 5 6 10",
            "--durable",
            "--model",
            f"scripted:{answers}",
            "--quiet",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    made = dict(json.loads(result.stdout))
    assert made["status"] == "succeeded"
    return made


def test_view_writes_a_page_with_the_winning_path_highlighted(db: Path, tmp_path: Path) -> None:
    made = solved_run(tmp_path)
    result = runner.invoke(app, ["runs", "view", str(made["id"]), "--out", "run.html"])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "run.html").read_text()
    assert f"Run {made['id']}" in page and "succeeded" in page
    path_nodes = page.count('class="path"')
    assert path_nodes == 4  # the root and the three steps to 24
    assert "4 + 20" in page and "model_call" in page


def test_view_reads_an_export_file_and_escapes_model_text(db: Path, tmp_path: Path) -> None:
    made = solved_run(tmp_path)
    exported = runner.invoke(app, ["runs", "export", str(made["id"]), "--out", "run.json"])
    assert exported.exit_code == 0
    doc = json.loads((tmp_path / "run.json").read_text())
    doc["state"]["nodes"][1]["text"] = "<script>alert(1)</script>"
    (tmp_path / "run.json").write_text(json.dumps(doc))
    result = runner.invoke(app, ["runs", "view", "run.json", "--out", "page.html"])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "page.html").read_text()
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_a_file_that_is_not_an_export_is_a_clear_usage_error(db: Path, tmp_path: Path) -> None:
    (tmp_path / "other.json").write_text('{"hello": 1}')
    result = runner.invoke(app, ["runs", "view", "other.json"])
    assert result.exit_code == 2
    assert "not a run export" in result.output


def test_render_run_with_no_saved_tree_still_shows_the_run() -> None:
    page = render_run(
        {
            "run": {
                "id": "run-x",
                "name": "",
                "status": "created",
                "app": "game24",
                "strategy": "dfs",
                "termination": None,
                "calls": 0,
                "tokens": 0,
                "created_at": "t0",
                "updated_at": "t1",
            },
            "state": None,
            "events": [],
            "calls": [],
        }
    )
    assert "No saved tree." in page and "run-x" in page
