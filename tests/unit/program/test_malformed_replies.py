"""A reply the host cannot read is a verdict (`bad_output`), never a host exception:
`{'$q': [1, 0]}` (a "fraction" over zero) from model-written code once raised
ZeroDivisionError in the host, ended the run, printed a traceback on the CLI and
answered 500 over HTTP (issue 34)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from test_program_strategy import COMBINE, GOAL, SUCC, fenced
from typer.testing import CliRunner

from guardsearch import ScriptedModel
from guardsearch.apps.game24 import solve_game24
from guardsearch.cli import app
from guardsearch.server import create_app

BAD_GOAL = "def is_goal(state):\n    return {'$q': [1, 0]}\n"
# passes every test, then answers the search's root with what the host cannot read
BAD_AT_SEARCH = SUCC.replace(
    "    return out", "    return {'$q': [1, 0]} if sorted(state) == [4, 5, 6, 10] else out"
)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path))
    return tmp_path


async def test_one_bad_sample_is_a_verdict_and_the_run_goes_on() -> None:
    model = ScriptedModel([fenced(BAD_GOAL), fenced(GOAL), fenced(COMBINE), fenced(SUCC)])
    result = await solve_game24(
        "4 5 6 10", strategy="program", model=model, samples=1, feedback=True
    )
    assert result["succeeded"] and result["calls"] == 4
    retry = "\n".join(m.content for m in model.requests[1].messages)
    assert "bad_output" in retry and "not a fraction" in retry


async def test_a_bad_reply_at_search_time_is_a_fault_and_the_code_is_written_again() -> None:
    model = ScriptedModel([fenced(GOAL), fenced(COMBINE), fenced(BAD_AT_SEARCH), fenced(SUCC)])
    result = await solve_game24("4 5 6 10", strategy="program", model=model)
    assert result["succeeded"] and result["calls"] == 4
    rewrite = model.requests[3].messages[0].content
    assert "At search time" in rewrite and "bad_output" in rewrite


def test_the_cli_ends_a_run_of_bad_replies_with_one_line(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([fenced(BAD_GOAL)] * 12))
    args = ["solve", "game24", "4 5 6 10", "--strategy", "program",
            "--model", f"scripted:{answers}"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and "ZeroDivisionError" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


async def test_http_answers_a_run_of_bad_replies_with_its_verdict_never_500() -> None:
    model = ScriptedModel([fenced(BAD_GOAL)], repeat_last=True)
    app = create_app(model=model, api_key="k")
    body = {"app": "game24", "problem": {"numbers": "4 5 6 10"}, "strategy": "program",
            "options": {"samples": 1, "retries": 1, "backtracks": 0}}  # fmt: skip
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
        response = await c.post("/solve", json=body, headers={"X-API-Key": "k"})
    assert response.status_code == 200, response.text
    assert response.json()["succeeded"] is False
    assert response.json()["termination"] == "all_pruned"
