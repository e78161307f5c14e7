"""A real server: uvicorn on 127.0.0.1, 200 concurrent POST /run on a scripted model.

Every request must come back complete (200, an AgentResponse with a verified source):
none lost, none mixed up. Latency percentiles are printed for the record.
"""

from __future__ import annotations

import asyncio
import json
import socket
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from guardsearch.core.messages import ModelRequest
from guardsearch.corpus import CorpusIndex, Document
from guardsearch.loops.research import AgentResponse, ResearchConfig
from guardsearch.models.scripted import ScriptedModel
from guardsearch.server import create_app
from guardsearch.tools import CorpusProvider

REQUESTS = 200
TOPICS = ["Seurat", "Signac", "Monet", "Degas", "Renoir", "Cezanne", "Pissarro", "Morisot"]


def _model() -> ScriptedModel:
    """Answers by output schema; the synthesis names the topic its own prompt asked about,
    so a response mixed up between requests would be caught."""

    async def answer(request: ModelRequest) -> str:
        await asyncio.sleep(0.005)  # a model call takes time; let requests interleave
        title = (request.json_schema or {}).get("title")
        text = request.messages[-1].content
        topic = next(t for t in TOPICS if t in request.messages[0].content)
        if title == "PlanDraft":
            return json.dumps(
                {
                    "complexity": "simple",
                    "queries": [
                        {"query": f"{topic} painter", "intent": "who"},
                        {"query": f"{topic} works", "intent": "what"},
                        {"query": f"{topic} life", "intent": "when"},
                    ],
                }
            )
        if title == "ReflectionDraft":
            return json.dumps(
                {"sufficient": True, "confidence": 0.8, "gaps": [], "new_queries": []}
            )
        source_id = text.split(f"{topic} was")[0].rsplit("[", 1)[1].split("]")[0]
        return json.dumps(
            {
                "answer": f"{topic} was a French painter [{source_id}].",
                "citations": [f"[{source_id}]"],
            }
        )

    return ScriptedModel(answer, name="scripted-load")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    index = CorpusIndex(tmp_path / "index.sqlite3")
    index.add(
        "painters",
        [
            Document(
                corpus="painters",
                key=t,
                title=t,
                body=f"{t} was a French painter.",
                location=f"https://example.org/{t}",
            )
            for t in TOPICS
        ],
    )
    app = create_app(
        model=_model(),
        providers=[CorpusProvider(index)],
        config=ResearchConfig(),
        max_concurrent_runs=REQUESTS,
    )
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", backlog=4096, timeout_keep_alive=30
    )
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=20)
    index.close()


def test_200_concurrent_runs_all_complete(server: str) -> None:
    async def main() -> list[tuple[str, float, httpx.Response]]:
        limits = httpx.Limits(max_connections=REQUESTS, max_keepalive_connections=REQUESTS)
        async with httpx.AsyncClient(base_url=server, timeout=120, limits=limits) as client:

            async def one(i: int) -> tuple[str, float, httpx.Response]:
                topic = TOPICS[i % len(TOPICS)]
                started = time.perf_counter()
                response = await client.post("/run", json={"task": f"Who was {topic}?"})
                return topic, time.perf_counter() - started, response

            return await asyncio.gather(*(one(i) for i in range(REQUESTS)))

    started = time.perf_counter()
    results = asyncio.run(main())
    wall = time.perf_counter() - started
    latencies = sorted(latency for _, latency, _ in results)
    p50 = statistics.median(latencies)
    p99 = latencies[int(0.99 * (len(latencies) - 1))]
    print(
        f"\n{REQUESTS} concurrent /run: wall {wall:.2f}s, p50 {p50 * 1000:.0f} ms, "
        f"p99 {p99 * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms"
    )
    assert len(results) == REQUESTS
    for topic, _, response in results:
        assert response.status_code == 200, response.text
        body = AgentResponse.model_validate(response.json())
        assert body.summary.startswith(topic)
        assert [s.title for s in body.sources] == [topic]
    run_ids = {r.json()["run_id"] for _, _, r in results}
    assert len(run_ids) == REQUESTS
