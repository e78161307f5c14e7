"""`guardsearch runs view`: a run as one HTML page (tree, winning path, events).

The page draws itself from the run's data, embedded as JSON; these tests read that
data (tests/browser draws it in Chromium).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from guardsearch.cli import app
from guardsearch.viewer import render_run

runner = CliRunner()


def embedded(page: str) -> dict[str, Any]:
    """The data a one-file page carries (`<script id="gs-boot" type="application/json">`)."""
    match = re.search(r'<script id="gs-boot" type="application/json">(.*?)</script>', page, re.S)
    assert match, "no embedded data"
    return dict(json.loads(match.group(1)))


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
    assert f"<title>Run {made['id']}</title>" in page
    view = embedded(page)["view"]
    assert embedded(page)["mode"] == "static"
    assert view["run"]["status"] == "succeeded"
    nodes = {n["id"]: n for n in view["nodes"]}
    path = [view["goal"]]
    while nodes[path[-1]]["parent"]:
        path.append(nodes[path[-1]]["parent"])
    assert len(path) == 4  # the root and the three steps to 24
    assert nodes[path[0]]["text"].startswith("4 + 20 = 24")
    assert nodes[path[0]]["verdict"]["guard"] == "game24-final"
    assert "model_call" in {e["kind"] for e in view["events"]}
    prompt = view["calls"][0]["messages"][-1]  # the prompts travel with the page
    assert prompt == {"role": "user", "content": "Input: 4 5 6 10\nPossible next steps:"}
    # nothing fetched from elsewhere: the one address is the SVG namespace, a name
    assert set(re.findall(r"https?://[^\"'\s]+", page)) == {"http://www.w3.org/2000/svg"}


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
    assert "<script>alert" not in page and "</script><" not in page.split("gs-boot")[1][:-40]
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in page
    texts = [n["text"] for n in embedded(page)["view"]["nodes"]]
    assert "<script>alert(1)</script>" in texts  # the page shows it as text


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
    view = embedded(page)["view"]
    assert view["nodes"] == [] and view["run"]["id"] == "run-x" and "run-x" in page
