"""`find(..., history=PATH)` and `guardsearch find --history FILE.json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from find_helpers import PLAN, answer
from typer.testing import CliRunner

from guardsearch.apps.find import find
from guardsearch.cli.find import find as find_cmd
from guardsearch.core.errors import ConfigError
from guardsearch.corpus import CorpusIndex
from guardsearch.loops.review import Refinement, RefinementHistory, load_history, save_history
from guardsearch.models.scripted import ScriptedModel
from guardsearch.tools.corpus_search import CorpusProvider

REQUEST = "paintings by impressionist painters"


async def test_find_loads_and_saves_the_history_file(
    art_index: CorpusIndex, tmp_path: Path
) -> None:
    path = tmp_path / "history.json"
    first = await find(
        REQUEST, model=ScriptedModel(answer), provider=CorpusProvider(art_index), history=path
    )
    assert first.attempts[1].applied is not None
    saved = load_history(path)
    assert saved.records and {r.run for r in saved.records} == {first.history_run}
    assert all(r.domain == "art" for r in saved.records)
    second = await find(
        REQUEST, model=ScriptedModel(answer), provider=CorpusProvider(art_index), history=path
    )
    assert second.history_run == first.history_run + 1
    # what raised quality most in the first run is applied first in the second
    best = max(saved.records, key=lambda r: r.gain or 0)
    assert (best.gain or 0) >= 0.05 and second.attempts[1].applied == best.refinement
    assert {r.run for r in load_history(path).records} == {first.history_run, second.history_run}


async def test_a_refinement_that_helped_in_the_history_file_is_tried_first(
    art_index: CorpusIndex, tmp_path: Path
) -> None:
    # an earlier run in the art domain: filtering by source raised quality a lot
    path = tmp_path / "history.json"
    earlier = RefinementHistory()
    run = earlier.begin_run()
    sources = Refinement(level="sources", reason="filter by source", target="person")
    earlier.applied(1, sources, 0.1, run=run, domain="art")
    earlier.outcome(0.6, run=run)
    save_history(earlier, path)

    found = await find(
        REQUEST, model=ScriptedModel(answer), provider=CorpusProvider(art_index), history=path
    )
    # without the history the first refinement is a keyword filter (escalation order)
    assert found.attempts[1].applied is not None
    assert found.attempts[1].applied.level == "sources"
    assert found.refinements.records[0].learned


async def test_find_refuses_a_broken_history_file(art_index: CorpusIndex, tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    path.write_text('{"records": ')
    model = ScriptedModel(answer)
    with pytest.raises(ConfigError, match="not valid JSON"):
        await find(REQUEST, model=model, provider=CorpusProvider(art_index), history=path)
    assert model.calls == 0 and path.read_text() == '{"records": '


def cli() -> typer.Typer:
    app = typer.Typer()
    app.command()(find_cmd)
    app.command()(lambda: None)
    return app


def test_cli_find_history_option(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(
        json.dumps([json.dumps(PLAN), json.dumps({"answer": "yes", "reason": "ok"})])
    )
    history = tmp_path / "history.json"
    args = ["find", REQUEST, "--min", "1", "--model", f"scripted:{answers}", "--json"]
    result = CliRunner().invoke(cli(), [*args, "--history", str(history)])
    assert result.exit_code == 0, result.output
    assert json.loads(history.read_text())["format"] == "guardsearch.refinement_history"

    history.write_text("garbage")
    broken = CliRunner().invoke(cli(), [*args, "--history", str(history)])
    assert broken.exit_code == 2
    payload = json.loads(broken.stdout)
    assert payload["ok"] is False and "refinement history" in payload["error"]
    assert history.read_text() == "garbage"
