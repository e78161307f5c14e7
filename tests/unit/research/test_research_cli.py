"""`guardsearch research`, `guardsearch corpus ...` and `guardsearch serve` from the shell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from research_helpers import ANSWER, PLAN, QUESTION, SUFFICIENT
from typer.testing import CliRunner

from guardsearch.cli.corpus import corpus_app
from guardsearch.cli.research import research
from guardsearch.cli.serve import serve

runner = CliRunner()


@pytest.fixture(scope="module")
def shared_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cli-home")


@pytest.fixture(autouse=True)
def home(shared_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One home for the module: the Wikipedia index is built once, not per test."""
    monkeypatch.setenv("GUARDSEARCH_HOME", str(shared_home))
    return shared_home


def cli() -> typer.Typer:
    """The commands registered the way cli/__init__.py registers them."""
    app = typer.Typer()
    app.command()(research)
    app.command()(serve)
    app.add_typer(corpus_app, name="corpus")
    return app


def scripted(tmp_path: Path, *answers: object) -> str:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps([json.dumps(a) if not isinstance(a, str) else a for a in answers]))
    return f"scripted:{path}"


def test_research_json_answers_with_a_verified_wikipedia_citation(tmp_path: Path) -> None:
    spec = scripted(tmp_path, PLAN, SUFFICIENT, ANSWER)
    result = runner.invoke(cli(), ["research", QUESTION, "--model", spec, "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert "Georges Seurat" in payload["final_answer"]
    source = payload["sources"][0]
    assert source["title"] == "A Sunday Afternoon on the Island of La Grande Jatte"
    assert source["license"] == "CC BY-SA 4.0"
    assert payload["citations"]["verified"] == [source["id"]]
    # plan, reflect and synthesize: three outputs judged, none repeated or repaired
    assert payload["steering"] == {
        "outputs": 3,
        "repeats": 0,
        "repeat_share": 0.0,
        "repairs": 0,
        "prevented": 0,
    }


def test_research_takes_the_tier_from_research_tier_unless_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RESEARCH_TIER", "deep")  # the planner guesses "simple"
    spec = scripted(tmp_path, PLAN, SUFFICIENT, ANSWER)
    result = runner.invoke(cli(), ["research", QUESTION, "--model", spec, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["tier"] == "deep"
    spec = scripted(tmp_path, PLAN, SUFFICIENT, ANSWER)
    result = runner.invoke(
        cli(), ["research", QUESTION, "--model", spec, "--json", "--tier", "standard"]
    )
    assert json.loads(result.stdout)["tier"] == "standard"


def test_research_support_off_skips_the_support_check(tmp_path: Path) -> None:
    unsupported = {"answer": "Vincent van Gogh painted it [1].", "citations": ["[1]"]}
    spec = scripted(tmp_path, PLAN, SUFFICIENT, unsupported)
    result = runner.invoke(
        cli(), ["research", QUESTION, "--model", spec, "--json", "--support", "off"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["citations"]["method"] == "off"


def test_research_prints_removed_claims(tmp_path: Path) -> None:
    answer = {
        "answer": ANSWER["answer"] + " It was painted in Amsterdam in 1950 [1].",
        "citations": ["[1]"],
    }
    spec = scripted(tmp_path, PLAN, SUFFICIENT, answer)
    result = runner.invoke(cli(), ["research", QUESTION, "--model", spec, "--quiet"])
    assert result.exit_code == 0, result.output
    assert "Amsterdam" not in result.stdout
    assert "removed unsupported claim" in result.stderr and "Amsterdam" in result.stderr


def test_research_prints_the_answer_and_its_sources(tmp_path: Path) -> None:
    spec = scripted(tmp_path, PLAN, SUFFICIENT, ANSWER)
    result = runner.invoke(cli(), ["research", QUESTION, "--model", spec, "--quiet"])
    assert result.exit_code == 0
    assert "Georges Seurat" in result.stdout
    assert "Sources:" in result.stdout and "en.wikipedia.org/wiki/A_Sunday" in result.stdout


def test_research_failure_exits_1_with_an_error_response(tmp_path: Path) -> None:
    spec = scripted(tmp_path, "not json")
    result = runner.invoke(cli(), ["research", QUESTION, "--model", spec, "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["type"] == "parse_error"


def test_research_rejects_an_unknown_corpus(tmp_path: Path) -> None:
    spec = scripted(tmp_path, PLAN)
    result = runner.invoke(
        cli(), ["research", QUESTION, "--model", spec, "--corpus", "nope", "--json"]
    )
    assert result.exit_code == 2
    assert "no corpus named 'nope'" in json.loads(result.stdout)["error"]


def test_corpus_add_list_search_and_research_over_own_files(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "kiwi.md").write_text(
        "# Kiwi\n\nThe kiwi is a flightless bird endemic to New Zealand."
    )
    (notes / "moa.html").write_text("<title>Moa</title><p>The moa were giant birds.</p>")
    added = runner.invoke(cli(), ["corpus", "add", str(notes), "--name", "birds", "--json"])
    assert added.exit_code == 0, added.output
    assert json.loads(added.stdout) == {"corpus": "birds", "added": 2, "documents": 2}
    listed = json.loads(runner.invoke(cli(), ["corpus", "list", "--json"]).stdout)
    names = {c["name"]: c for c in listed["corpora"]}
    assert names["birds"]["documents"] == 2 and names["wikipedia"]["documents"] == 10_033
    found = json.loads(
        runner.invoke(
            cli(), ["corpus", "search", "flightless bird", "--corpus", "birds", "--json"]
        ).stdout
    )
    assert found["hits"][0]["title"] == "Kiwi"
    plan = {
        "complexity": "simple",
        "queries": [
            {"query": "kiwi bird", "intent": "a"},
            {"query": "kiwi", "intent": "b"},
            {"query": "New Zealand bird", "intent": "c"},
        ],
    }
    answer = {"answer": "The kiwi is a flightless bird [1].", "citations": ["[1]"]}
    spec = scripted(tmp_path, plan, SUFFICIENT, answer)
    result = runner.invoke(
        cli(), ["research", "What is a kiwi?", "--corpus", "birds", "--model", spec, "--json"]
    )
    payload = json.loads(result.stdout)
    assert payload["sources"][0]["location"].startswith("file://")


def test_corpus_add_of_nothing_useful_fails(tmp_path: Path) -> None:
    (tmp_path / "x.pdf").write_text("nope")
    result = runner.invoke(cli(), ["corpus", "add", str(tmp_path), "--name", "empty"])
    assert result.exit_code == 2


def test_serve_builds_the_app_and_hands_it_to_uvicorn(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: dict[str, Any] = {}

    def fake_run(app: Any, host: str, port: int, log_level: str, **options: Any) -> None:
        seen.update(app=app, host=host, port=port, **options)

    monkeypatch.setattr("uvicorn.run", fake_run)
    store = tmp_path / "runs.db"
    args = ["serve", "--port", "8123", "--model", "scripted:x.json", "--store", str(store)]
    result = runner.invoke(cli(), args)
    assert result.exit_code == 0, result.output
    assert seen["host"] == "127.0.0.1" and seen["port"] == 8123
    assert type(seen["app"]).__name__ == "FastAPI"
    # the run viewer of that store, and a shutdown that does not wait on its streams
    assert seen["app"].state.ui_reader.url == str(store) and store.exists()
    assert seen["timeout_graceful_shutdown"] == 5
    assert "run viewer: http://127.0.0.1:8123/ui" in result.output
