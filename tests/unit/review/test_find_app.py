"""The find app end to end on a small corpus and a scripted model, and its CLI contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from find_helpers import PLAN, answer
from typer.testing import CliRunner

from guardsearch.apps.find import find
from guardsearch.cli.find import find as find_cmd
from guardsearch.corpus import CorpusIndex
from guardsearch.loops.review import ReviewConfig
from guardsearch.models.scripted import ScriptedModel
from guardsearch.tools.corpus_search import CorpusProvider


async def test_find_refines_after_a_low_quality_first_attempt(art_index: CorpusIndex) -> None:
    run = await find(
        "paintings by impressionist painters",
        model=ScriptedModel(answer),
        provider=CorpusProvider(art_index),
        min_items=2,
    )
    titles = {i.title for i in run.items}
    assert titles == {"Water Lilies (Monet series)", "Impression, Sunrise"}
    first = run.attempts[0].report
    assert not first.meets_threshold
    assert first.rejection_breakdown["person"] >= 3
    assert first.suggested_refinement is not None
    assert run.attempts[1].applied == first.suggested_refinement
    assert run.attempts[-1].report.quality_score > first.quality_score
    assert run.reflection is not None and run.domain == "art" and run.threshold == 0.4


async def test_rules_reject_before_the_judge_is_asked(art_index: CorpusIndex) -> None:
    model = ScriptedModel(answer)
    run = await find(
        "paintings by impressionist painters",
        model=model,
        provider=CorpusProvider(art_index),
        min_items=2,
    )
    judged = [  # the item's line: the first inside the data fence
        r.messages[-1].content.split("<data>\n", 1)[1].splitlines()[0]
        for r in model.requests
        if r.messages[-1].content.startswith("Item:")
    ]
    assert judged and all("painter (" not in j for j in judged)  # people never reach the judge
    assert not any("Mona Lisa" in j for j in judged)  # no evidence of "impressionist" for it
    assert run.usage.calls == 1 + len(judged)


def cli() -> typer.Typer:
    app = typer.Typer()
    app.command()(find_cmd)
    app.command()(lambda: None)
    return app


def test_cli_find_json_contract(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(
        json.dumps([json.dumps(PLAN), json.dumps({"answer": "yes", "reason": "ok"})])
    )
    transcript = tmp_path / "transcript.json"
    result = CliRunner().invoke(
        cli(),
        [
            "find",
            "paintings by impressionist painters",
            "--min",
            "1",
            "--model",
            f"scripted:{answers}",
            "--json",
            "--transcript",
            str(transcript),
            "--max-calls",
            "30",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert set(payload) >= {"items", "quality_report", "attempts", "calls"}
    assert len(payload["quality_report"]) == len(payload["attempts"]) >= 1
    assert all("painting" in i["description"].lower() for i in payload["items"])
    assert payload["calls"] >= 1 and payload["ok"] is True
    steering = payload["steering"]  # counted from the run's trace (core/steering.py)
    assert set(steering) == {"outputs", "repeats", "repeat_share", "repairs", "prevented"}
    assert steering["outputs"] >= payload["calls"] - steering["repeats"] >= 1
    assert json.loads(transcript.read_text())["reflection"]["plan"]


def test_cli_find_usage_errors_exit_2() -> None:
    result = CliRunner().invoke(cli(), ["find", "x", "--model", "nonsense:spec", "--json"])
    assert result.exit_code == 2
    assert json.loads(result.stdout)["ok"] is False


def test_review_config_rejects_bad_values() -> None:
    from guardsearch.core.errors import ConfigError

    with pytest.raises(ConfigError):
        ReviewConfig(max_attempts=0)
