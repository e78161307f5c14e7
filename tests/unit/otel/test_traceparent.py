"""POST /run and /solve continue the caller's trace: its `traceparent` is the run's parent."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from research_script import QUESTION, Painting, research_model
from span_tree import SpanTree

from guardsearch.loops.research import ResearchConfig
from guardsearch.server import create_app

CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path / "home"))
    yield


def _client() -> httpx.AsyncClient:
    app = create_app(model=research_model(), providers=[Painting()], config=ResearchConfig())
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


async def test_traceparent_on_post_run_becomes_the_runs_parent(
    exporter: InMemorySpanExporter,
) -> None:
    async with _client() as client:
        response = await client.post(
            "/run", json={"task": QUESTION}, headers={"traceparent": TRACEPARENT}
        )
    assert response.status_code == 200, response.text
    tree = SpanTree(exporter.get_finished_spans())
    (request,) = tree.named("POST /run")
    assert request.kind is SpanKind.SERVER
    assert f"{request.context.trace_id:032x}" == CALLER_TRACE
    assert request.parent is not None and request.parent.is_remote
    assert f"{request.parent.span_id:016x}" == CALLER_SPAN
    assert request.attributes["http.response.status_code"] == 200
    (run,) = tree.named("invoke_workflow research")
    assert tree.parent(run) is request
    assert run.attributes["guardsearch.run.id"] == request.attributes["guardsearch.run.id"]
    # The whole run is in the caller's trace.
    assert {s.context.trace_id for s in tree.spans} == {int(CALLER_TRACE, 16)}


async def test_traceparent_on_post_solve_becomes_the_searchs_parent(
    exporter: InMemorySpanExporter,
) -> None:
    async with _client() as client:
        response = await client.post(
            "/solve",
            json={"app": "game24", "problem": {"numbers": "4 5 6 10"}, "budget": {"calls": 2}},
            headers={"traceparent": TRACEPARENT},
        )
    assert response.status_code in (200, 422), response.text
    tree = SpanTree(exporter.get_finished_spans())
    (request,) = tree.named("POST /solve")
    (run,) = tree.named("invoke_workflow search")
    assert tree.parent(run) is request
    assert f"{request.parent.span_id:016x}" == CALLER_SPAN


async def test_without_a_traceparent_the_request_starts_a_trace(
    exporter: InMemorySpanExporter,
) -> None:
    async with _client() as client:
        await client.post("/run", json={"task": QUESTION})
        await client.get("/healthz")
    tree = SpanTree(exporter.get_finished_spans())
    (request,) = tree.roots()  # /healthz is not traced
    assert request.name == "POST /run" and request.parent is None
