"""The research planner's guard: queries must differ in the words the retriever sees."""

from __future__ import annotations

import json

import pytest

from guardsearch import Artifact, Context
from guardsearch.loops.research.config import ResearchConfig
from guardsearch.loops.research.phases import plan_step


async def passes(*queries: str) -> bool:
    step = plan_step(ResearchConfig())
    value = {"complexity": "simple", "queries": [{"query": q, "intent": "find"} for q in queries]}
    artifact = Artifact(id="a", step=step.name, text=json.dumps(value), value=value)
    assert step.checker is not None
    return (await step.checker.check(artifact, Context(objective="q"))).passed


@pytest.mark.parametrize(
    "queries",
    [
        ("Grand Prince of Kiev", "prince kiev grand", "Kiev Grand Prince"),  # reordered
        ("Grand Prince of Kiev", "GRAND PRINCE OF KIEV ", "grand prince of kiev"),  # recased
        ("the Grand Prince of Kiev", "Grand Prince Kiev", "a grand prince of Kiev"),  # stopwords
    ],
)
async def test_queries_with_the_same_words_are_the_same_query(queries: tuple[str, ...]) -> None:
    assert not await passes(*queries)


async def test_queries_with_different_words_pass() -> None:
    assert await passes("Grand Prince of Kiev", "prince kiev grand", "ruler 978 1015")
