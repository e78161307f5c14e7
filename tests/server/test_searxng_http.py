"""The SearxNG provider over real HTTP: a tiny fake SearxNG JSON server on 127.0.0.1.

`provider_from_spec("searxng:http://127.0.0.1:PORT")` runs through the research loop
(scripted model): a 500 is retried over the wire and the answer cites the web hit;
a refused connection falls back to the corpus provider.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from guardsearch.core.messages import ModelRequest
from guardsearch.corpus import CorpusIndex, Document
from guardsearch.loops.research import AgentResponse, ResearchConfig, ResearchLoop
from guardsearch.models.scripted import ScriptedModel
from guardsearch.tools import CorpusProvider, ResilienceSettings, provider_from_spec

QUESTION = "Who painted A Sunday Afternoon on the Island of La Grande Jatte?"
WEB_URL = "https://web.test/grande-jatte"
WEB_TEXT = "A Sunday Afternoon on the Island of La Grande Jatte was painted by Georges Seurat."
CORPUS_TEXT = (
    "A Sunday Afternoon on the Island of La Grande Jatte was painted from 1884 to 1886 and is "
    "Georges Seurat's most famous work."
)


@dataclass
class FakeSearxng:
    """What the fake server answers: `statuses` first (one per request), then results."""

    statuses: list[int] = field(default_factory=list)
    requests: list[dict[str, list[str]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, params: dict[str, list[str]]) -> tuple[int, bytes]:
        with self.lock:
            self.requests.append(params)
            status = self.statuses.pop(0) if self.statuses else 200
        if status != 200:
            return status, b'{"error": "internal"}'
        body = {
            "query": params.get("q", [""])[0],
            "results": [
                {"title": "La Grande Jatte", "url": WEB_URL, "content": WEB_TEXT, "engine": "fake"},
                {"title": "no text", "url": "https://web.test/empty", "content": ""},
            ],
        }
        return 200, json.dumps(body).encode()


@pytest.fixture
def searxng() -> Iterator[tuple[str, FakeSearxng]]:
    fake = FakeSearxng()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urlparse(self.path)
            if url.path != "/search":
                self.send_error(404)
                return
            status, body = fake.answer(parse_qs(url.query))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return None  # keep the test output clean

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture
def corpus(tmp_path: Path) -> Iterator[CorpusProvider]:
    index = CorpusIndex(tmp_path / "index.sqlite3")
    index.add(
        "wiki-mini",
        [
            Document(
                corpus="wiki-mini",
                key="jatte",
                title="A Sunday Afternoon on the Island of La Grande Jatte",
                description="Painting by Georges Seurat",
                body=CORPUS_TEXT,
                location="https://en.wikipedia.org/wiki/A_Sunday_Afternoon",
            )
        ],
        license="CC BY-SA 4.0",
    )
    yield CorpusProvider(index)
    index.close()


def _model() -> ScriptedModel:
    async def answer(request: ModelRequest) -> str:
        title = (request.json_schema or {}).get("title")
        if title == "PlanDraft":
            return json.dumps(
                {
                    "complexity": "simple",
                    "queries": [
                        {"query": "Grande Jatte painting", "intent": "the painting"},
                        {"query": "Georges Seurat", "intent": "the painter"},
                        {"query": "pointillism", "intent": "the technique"},
                    ],
                }
            )
        if title == "ReflectionDraft":
            return json.dumps(
                {"sufficient": True, "confidence": 0.9, "gaps": [], "new_queries": []}
            )
        return json.dumps(
            {
                "answer": "A Sunday Afternoon on the Island of La Grande Jatte was painted by "
                "Georges Seurat [1].",
                "citations": ["[1]"],
            }
        )

    return ScriptedModel(answer, name="scripted-searxng")


class Waits:
    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)  # the backoff is recorded, not slept


def _loop(spec: str, corpus: CorpusProvider, waits: Waits) -> ResearchLoop:
    return ResearchLoop(
        model=_model(),
        providers=[provider_from_spec(spec), corpus],
        config=ResearchConfig(),
        resilience=ResilienceSettings(timeout_s=5.0),
        sleep=waits,
    )


async def test_a_500_over_http_is_retried_and_the_web_hit_is_cited(
    searxng: tuple[str, FakeSearxng], corpus: CorpusProvider
) -> None:
    url, fake = searxng
    fake.statuses = [500]
    waits = Waits()
    run = await _loop(f"searxng:{url}", corpus, waits).run(QUESTION)
    response = run.response
    assert isinstance(response, AgentResponse), response
    source = response.sources[0]
    assert source.location == WEB_URL and source.provider == f"searxng:{url}"
    assert source.attribution == "fake"
    # the first request got the 500; the retry asked the same query again, over the wire
    first, second = fake.requests[0], fake.requests[1]
    assert first == second and first["q"] == [QUESTION] and first["format"] == ["json"]
    assert len(waits.seconds) == 1 and 1.0 <= waits.seconds[0] < 2.0
    retries = [e for e in response.errors if e.get("what") == "retry"]
    assert len(retries) == 1 and "HTTP 500" in str(retries[0]["error"])
    assert not response.degraded_mode
    assert not any(e.get("what") == "fallback" for e in response.errors)


async def test_a_refused_connection_falls_back_to_the_corpus(corpus: CorpusProvider) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    waits = Waits()
    run = await _loop(f"searxng:http://127.0.0.1:{port}", corpus, waits).run(QUESTION)
    response = run.response
    assert isinstance(response, AgentResponse), response
    assert [s.provider for s in response.sources] == ["corpus"]
    assert response.sources[0].location == "https://en.wikipedia.org/wiki/A_Sunday_Afternoon"
    failed = [e for e in response.errors if e.get("what") in ("retry", "provider_failed")]
    assert failed and all("ConnectError" in str(e["error"]) for e in failed)
    fallbacks = [e for e in response.errors if e.get("what") == "fallback"]
    assert fallbacks and all(e["provider"] == "corpus" for e in fallbacks)
    # three queries failed on the web provider: its breaker opened, the rest went straight
    # to the corpus; the run itself never degraded (the corpus answered every query)
    assert [e["provider"] for e in response.errors if e.get("what") == "provider_circuit_open"] == [
        f"searxng:http://127.0.0.1:{port}"
    ]
    assert not response.degraded_mode
    assert len(waits.seconds) == 3 * 2  # two backoffs per query before the breaker opened
