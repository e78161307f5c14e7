"""Helpers for the research tests: scripted models, fake providers, sample documents."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from guardsearch.core.messages import ModelRequest
from guardsearch.core.source import Source
from guardsearch.models.scripted import ScriptedModel
from guardsearch.tools.base import TransientSearchError

PLAN = {
    "complexity": "simple",
    "queries": [
        {"query": "Grande Jatte painting", "intent": "find the painting"},
        {"query": "Georges Seurat", "intent": "the painter"},
        {"query": "pointillism", "intent": "the technique"},
    ],
}
SUFFICIENT = {"sufficient": True, "confidence": 0.9, "gaps": [], "new_queries": []}
INSUFFICIENT = {
    "sufficient": False,
    "confidence": 0.3,
    "gaps": ["who painted it"],
    "new_queries": [{"query": "Seurat painter", "intent": "the painter"}],
}
ANSWER = {
    "answer": "A Sunday Afternoon on the Island of La Grande Jatte was painted by "
    "Georges Seurat [1].",
    "citations": ["[1]"],
}
QUESTION = "Who painted A Sunday Afternoon on the Island of La Grande Jatte?"

DOCS = [
    (
        "A Sunday Afternoon on the Island of La Grande Jatte",
        "Painting by Georges Seurat",
        "A Sunday Afternoon on the Island of La Grande Jatte was painted from 1884 to 1886 and is "
        "Georges Seurat's most famous work. It is a leading example of pointillist technique.",
    ),
    (
        "Georges Seurat",
        "French painter (1859–1891)",
        "Georges Pierre Seurat was a French post-Impressionist artist. He devised the painting "
        "techniques known as chromoluminarism and pointillism.",
    ),
    (
        "Pointillism",
        "Painting technique",
        "Pointillism is a technique of painting in which small, distinct dots of colour are "
        "applied in patterns to form an image. "
        "Georges Seurat and Paul Signac developed the technique.",
    ),
    (
        "Eiffel Tower",
        "Tower in Paris",
        "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
        "It was built from 1887 to 1889.",
    ),
    (
        "Las Meninas",
        "1656 painting by Diego Velázquez",
        "Las Meninas is a 1656 oil painting in the Museo del Prado in Madrid, by Diego Velázquez.",
    ),
    (
        "Paris",
        "Capital of France",
        "Paris is the capital and largest city of France. "
        "The island of the Seine hosts Notre-Dame.",
    ),
]

Answer = str | dict[str, Any] | Exception | Callable[[ModelRequest], Any]


def research_model(
    plan: Answer | list[Answer] = PLAN,
    reflect: Answer | list[Answer] = SUFFICIENT,
    synthesize: Answer | list[Answer] = ANSWER,
    support: Answer | list[Answer] = '{"supported": true}',
    latency_s: float = 0.0,
) -> ScriptedModel:
    """A scripted model answering each research phase by its output schema.

    A list is consumed in order (its last answer repeats); a callable gets the request.
    """
    queues: dict[str, list[Answer]] = {}
    for title, spec in (
        ("PlanDraft", plan),
        ("ReflectionDraft", reflect),
        ("SynthesisDraft", synthesize),
        ("SupportVerdict", support),
    ):
        queues[title] = list(spec) if isinstance(spec, list) else [spec]

    async def answer(request: ModelRequest) -> str | Exception:
        if latency_s:
            import asyncio

            await asyncio.sleep(latency_s)
        title = (request.json_schema or {}).get("title", "")
        queue = queues.get(str(title))
        if not queue:
            return AssertionError(f"unexpected request for schema {title!r}")
        item = queue.pop(0) if len(queue) > 1 else queue[0]
        if callable(item) and not isinstance(item, Exception):
            item = item(request)
        if isinstance(item, dict):
            return json.dumps(item)
        return item

    return ScriptedModel(answer, name="scripted-research")


def phases(trace: Any) -> list[str]:
    return [e.data["phase"] for e in trace.of_kind("phase")]


class FakeProvider:
    """A provider whose answers are scripted per call: hits, an exception, or a hang."""

    def __init__(self, name: str, script: Iterable[Any] | Callable[[str], Any]) -> None:
        self._name = name
        self._fn = script if callable(script) else None
        self._queue = [] if callable(script) else list(script)
        self.queries: list[str] = []

    @property
    def name(self) -> str:
        return self._name

    async def search(self, query: str, k: int) -> list[Source]:
        import asyncio

        self.queries.append(query)
        item = (
            self._fn(query)
            if self._fn
            else (self._queue.pop(0) if len(self._queue) > 1 else self._queue[0])
        )
        if item == "hang":
            await asyncio.sleep(3600)
        if isinstance(item, Exception):
            raise item
        return list(item)[:k]


def hit(title: str, text: str, provider: str = "fake", n: int = 1) -> Source:
    return Source(
        title=title,
        location=f"https://example.org/{title.replace(' ', '_')}",
        text=text,
        provider=provider,
        kind="web",
        rank=n,
    )


def transient(message: str = "HTTP 500") -> TransientSearchError:
    return TransientSearchError(message)


async def no_sleep(_: float) -> None:
    return None


class SleepRecorder:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
