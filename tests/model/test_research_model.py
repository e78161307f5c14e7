"""The research loop on the real embedded model (slow; run with `pytest -m model`)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import typer
from typer.testing import CliRunner

from guardsearch.cli.research import research
from guardsearch.loops.research import AgentResponse, ResearchConfig
from guardsearch.server import create_app

pytestmark = pytest.mark.model

QUESTION = "Who painted A Sunday Afternoon on the Island of La Grande Jatte?"
ARTICLE = "A Sunday Afternoon on the Island of La Grande Jatte"


def _check(payload: dict[str, object]) -> None:
    response = AgentResponse.model_validate(payload)
    assert "seurat" in response.final_answer.lower()
    titles = [s.title for s in response.sources]
    assert ARTICLE in titles, titles
    source = next(s for s in response.sources if s.title == ARTICLE)
    assert source.id in response.citations.verified
    assert source.location == "https://en.wikipedia.org/wiki/" + ARTICLE.replace(" ", "_")
    assert source.license == "CC BY-SA 4.0"


def test_cli_research_answers_with_a_verified_citation(tmp_path: Path) -> None:
    app = typer.Typer()
    app.command()(research)
    app.command()(lambda: None)  # a second command keeps `research` a sub-command
    result = CliRunner().invoke(app, ["research", QUESTION, "--json"])
    assert result.exit_code == 0, result.output
    _check(json.loads(result.stdout))


async def test_post_run_answers_with_a_verified_citation() -> None:
    app = create_app(model_spec="embedded", config=ResearchConfig())
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test", timeout=600
    ) as client:
        response = await client.post("/run", json={"task": QUESTION})
    assert response.status_code == 200, response.text
    _check(response.json())


@pytest.mark.parametrize(
    ("question", "year", "article"),
    [
        # The example: a right year the old guard turned into an error.
        ("In what year did Frédéric Chopin die?", "1849", "Frédéric Chopin"),
    ],
)
def test_a_year_question_is_answered_with_the_year_verified(
    question: str, year: str, article: str
) -> None:
    app = typer.Typer()
    app.command()(research)
    app.command()(lambda: None)
    result = CliRunner().invoke(app, ["research", question, "--json"])
    assert result.exit_code == 0, result.output
    response = AgentResponse.model_validate(json.loads(result.stdout))
    assert response.status == "verified"
    assert year in response.final_answer and "[" in response.final_answer
    assert article in [s.title for s in response.sources]
