"""A scripted research run for the tracing tests: answers by schema, one source."""

from __future__ import annotations

import json

from guardsearch import ModelRequest, ScriptedModel
from guardsearch.core.source import Source

QUESTION = "Who painted A Sunday Afternoon on the Island of La Grande Jatte?"
ANSWERS = {
    "PlanDraft": {
        "complexity": "simple",
        "queries": [
            {"query": "Grande Jatte painting", "intent": "find the painting"},
            {"query": "Georges Seurat", "intent": "the painter"},
            {"query": "pointillism", "intent": "the technique"},
        ],
    },
    "ReflectionDraft": {"sufficient": True, "confidence": 0.9, "gaps": [], "new_queries": []},
    "SynthesisDraft": {
        "answer": "A Sunday Afternoon on the Island of La Grande Jatte was painted by "
        "Georges Seurat [1].",
        "citations": ["[1]"],
    },
    "SupportVerdict": {"supported": True},
}


def answer(request: ModelRequest) -> str:
    """The research phases' answers by schema title; anything else gets Game of 24 steps
    (the same service serves POST /solve)."""
    title = str((request.json_schema or {}).get("title"))
    return json.dumps(ANSWERS.get(title, {"steps": ["5 * 6", "4 + 5"]}))


class Painting:
    """A search provider with one source that answers the question."""

    name = "fake"

    async def search(self, query: str, k: int) -> list[Source]:
        text = (
            "A Sunday Afternoon on the Island of La Grande Jatte was painted from 1884 to "
            "1886 and is Georges Seurat's most famous work."
        )
        return [
            Source(
                title="A Sunday Afternoon on the Island of La Grande Jatte",
                location="https://example.org/Grande_Jatte",
                text=text,
                provider="fake",
                kind="web",
                rank=1,
            )
        ]


def research_model() -> ScriptedModel:
    return ScriptedModel(answer, name="scripted-research")
