"""The HTTP service in-process (ASGI): /run and its variants, jobs, SSE, metrics, security."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import httpx
import pytest
from research_helpers import INSUFFICIENT, QUESTION, FakeProvider, research_model

from guardsearch.core.budget import Budget
from guardsearch.corpus import CorpusIndex
from guardsearch.loops.research import AgentResponse, ErrorResponse, ResearchConfig
from guardsearch.server import create_app
from guardsearch.server.schemas import JobStatus
from guardsearch.tools import CorpusProvider


@pytest.fixture
async def client(small_index: CorpusIndex) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(
        model=research_model(), providers=[CorpusProvider(small_index)], config=ResearchConfig()
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test"
    ) as c:
        yield c


async def test_run_returns_a_backwards_compatible_agent_response(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/run", json={"task": QUESTION})
    assert response.status_code == 200
    body = AgentResponse.model_validate(response.json())
    assert body.summary == body.final_answer and "Seurat" in body.summary
    assert body.sources and body.sources[0].id == "[1]"
    # how feedback steered the run, counted from its trace (core/steering.py)
    assert body.steering["outputs"] >= 1 and body.steering["repeat_share"] == 0.0


async def test_old_clients_may_send_query_instead_of_task(client: httpx.AsyncClient) -> None:
    response = await client.post("/run", json={"query": QUESTION})
    assert response.status_code == 200 and response.json()["summary"]


async def test_run_simple_defaults_to_the_simple_tier(client: httpx.AsyncClient) -> None:
    response = await client.post("/run-simple", json={"task": QUESTION})
    assert response.status_code == 200 and response.json()["tier"] == "simple"


async def test_request_options_reach_the_loop(small_index: CorpusIndex) -> None:
    app = create_app(
        model=research_model(reflect=INSUFFICIENT),
        providers=[CorpusProvider(small_index)],
        # the model's reflection decides (no evidence stop), so max_iters=1 ends it
        config=ResearchConfig(evidence_stop=False),
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        body = (
            await c.post("/run", json={"task": QUESTION, "max_iters": 1, "complexity_tier": "deep"})
        ).json()
    assert body["iterations"] == 1 and body["tier"] == "deep"
    assert body["insufficient_termination"] is True


async def test_the_request_budget_fields_replace_the_server_default(
    small_index: CorpusIndex,
) -> None:
    app = create_app(
        model=research_model(),
        providers=[CorpusProvider(small_index)],
        config=ResearchConfig(),
        budget=Budget.of(tokens=40_000, seconds=120),
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        tight = await c.post("/run", json={"task": QUESTION, "token_budget": 500})
        default = await c.post("/run", json={"task": QUESTION, "max_execution_time_s": 60})
    assert tight.json()["stop_reason"] == "budget_exhausted"
    assert tight.json()["usage"]["total_tokens"] <= 500
    assert default.json()["stop_reason"] != "budget_exhausted"  # 60 s replaced; tokens stayed


async def test_an_invalid_request_is_a_400_error_response(client: httpx.AsyncClient) -> None:
    response = await client.post("/run", json={"task": "", "max_iters": 0})
    assert response.status_code == 400
    error = ErrorResponse.model_validate(response.json())
    assert error.error.type == "invalid_request" and not error.error.retryable


async def test_a_parse_failure_is_a_502_error_response(small_index: CorpusIndex) -> None:
    app = create_app(
        model=research_model(synthesize="garbage"),
        providers=[CorpusProvider(small_index)],
        config=ResearchConfig(),
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        response = await c.post("/run", json={"task": QUESTION})
    assert response.status_code == 502
    assert response.json()["error"]["type"] == "parse_error"


async def test_async_returns_a_job_id_and_the_result_is_polled(
    client: httpx.AsyncClient,
) -> None:
    accepted = await client.post("/run", json={"task": QUESTION, "async": True})
    assert accepted.status_code == 202
    job_id = accepted.json()["id"]
    assert accepted.headers["location"] == f"/runs/{job_id}"
    for _ in range(200):
        status = JobStatus.model_validate((await client.get(f"/runs/{job_id}")).json())
        if status.status in ("succeeded", "failed"):
            break
        await asyncio.sleep(0.01)
    assert status.status == "succeeded"
    assert isinstance(status.result, AgentResponse) and status.result.sources
    assert [p["phase"] for p in status.phases][:2] == ["start", "plan"]


async def test_an_unknown_run_is_a_404(client: httpx.AsyncClient) -> None:
    response = await client.get("/runs/nope")
    assert response.status_code == 404 and response.json()["error"]["type"] == "not_found"


async def test_stream_sends_one_event_per_phase_then_the_result(
    client: httpx.AsyncClient,
) -> None:
    events: list[tuple[str, dict[str, object]]] = []
    async with client.stream("POST", "/run", json={"task": QUESTION, "stream": True}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        event = ""
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                events.append((event, json.loads(line[6:])))
    kinds = [k for k, _ in events]
    assert kinds[0] == "run" and kinds[-1] == "result"
    phases = [d["phase"] for k, d in events if k == "phase"]
    # The sources state the answer: code ends the search ("reflected" by the evidence).
    assert {"plan", "search", "reflected", "synthesize"} <= set(phases)
    assert kinds[-2] == "run_end" and events[-2][1]["stop_reason"] == "sufficient"
    assert AgentResponse.model_validate(events[-1][1]).sources


async def test_search_endpoint_needs_no_model(small_index: CorpusIndex) -> None:
    app = create_app(
        model=research_model(plan=AssertionError("no model calls")),
        providers=[CorpusProvider(small_index)],
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        body = (await c.post("/search", json={"query": "Seurat", "k": 2})).json()
        unknown = await c.post("/search", json={"query": "Seurat", "corpus": "nope"})
    assert body["provider"] == "corpus" and len(body["results"]) == 2
    assert unknown.status_code == 400


async def test_search_reports_failure_as_503(small_index: CorpusIndex) -> None:
    from research_helpers import transient

    from guardsearch.tools import ResilienceSettings

    app = create_app(
        model=research_model(),
        providers=[FakeProvider("down", [transient()])],
        resilience=ResilienceSettings(attempts=1),
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        response = await c.post("/search", json={"query": "x"})
    assert response.status_code == 503 and response.json()["error"] == "HTTP 500"


async def test_metrics_expose_the_seed_series(client: httpx.AsyncClient) -> None:
    await client.post("/run", json={"task": QUESTION})
    text = (await client.get("/metrics")).text
    assert "research_loop_duration_seconds_count 1.0" in text
    assert "iterations_per_request_count 1.0" in text
    assert "search_failures_total 0.0" in text
    assert 'research_requests_total{outcome="ok"} 1.0' in text


async def test_search_failures_are_counted(small_index: CorpusIndex) -> None:
    from research_helpers import transient

    from guardsearch.tools import ResilienceSettings

    app = create_app(
        model=research_model(),
        providers=[FakeProvider("down", [transient()])],
        resilience=ResilienceSettings(attempts=2, backoff_base_s=0.0, max_wait_s=0.0),
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        body = (await c.post("/run", json={"task": QUESTION, "complexity_tier": "standard"})).json()
        text = (await c.get("/metrics")).text
    assert body["degraded_mode"] is True
    assert "search_failures_total 6.0" in text  # 3 queries x 2 attempts before the breaker


async def test_healthz_and_openapi_are_served(client: httpx.AsyncClient) -> None:
    assert (await client.get("/healthz")).json()["status"] == "ok"
    spec = (await client.get("/openapi.json")).json()
    assert {"/run", "/run-simple", "/search", "/runs/{run_id}", "/metrics", "/healthz"} <= set(
        spec["paths"]
    )


async def test_an_api_key_is_required_when_configured(small_index: CorpusIndex) -> None:
    app = create_app(
        model=research_model(), providers=[CorpusProvider(small_index)], api_key="s3cret"
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        assert (await c.post("/run", json={"task": QUESTION})).status_code == 401
        wrong = await c.post("/run", json={"task": QUESTION}, headers={"X-API-Key": "nope"})
        assert wrong.status_code == 401 and wrong.json()["error"]["type"] == "unauthorized"
        ok = await c.post(
            "/run", json={"task": QUESTION}, headers={"Authorization": "Bearer s3cret"}
        )
        assert ok.status_code == 200
        assert (await c.get("/healthz")).status_code == 200


async def test_oversized_requests_are_rejected_with_413(small_index: CorpusIndex) -> None:
    app = create_app(
        model=research_model(), providers=[CorpusProvider(small_index)], max_body_bytes=1000
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        response = await c.post(
            "/run",
            content=b'{"task": "' + b"x" * 5000 + b'"}',
            headers={"content-type": "application/json"},
        )

        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(5):
                yield b"x" * 400

        streamed = await c.post(
            "/run", content=chunks(), headers={"content-type": "application/json"}
        )
    assert response.status_code == 413
    assert response.json()["error"]["type"] == "request_too_large"
    assert streamed.status_code == 413


async def test_a_task_over_the_size_limit_is_invalid(client: httpx.AsyncClient) -> None:
    response = await client.post("/run", json={"task": "x" * 2001})
    assert response.status_code == 400


async def test_search_endpoint_failures_are_counted(small_index: CorpusIndex) -> None:
    from research_helpers import transient

    from guardsearch.tools import ResilienceSettings

    app = create_app(
        model=research_model(),
        providers=[FakeProvider("down", [transient()])],
        resilience=ResilienceSettings(attempts=2, backoff_base_s=0.0, max_wait_s=0.0),
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        assert (await c.post("/search", json={"query": "x"})).status_code == 503
        text = (await c.get("/metrics")).text
    assert "search_failures_total 2.0" in text  # one retried attempt + the final failure


async def test_runs_failing_during_setup_are_observed(client: httpx.AsyncClient) -> None:
    response = await client.post("/run", json={"task": QUESTION, "corpus": "nope"})
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request"
    text = (await client.get("/metrics")).text
    assert 'research_requests_total{outcome="invalid_request"} 1.0' in text
    assert "research_loop_duration_seconds_count 1.0" in text
    assert "iterations_per_request_count 1.0" in text


async def test_support_is_a_per_request_option(small_index: CorpusIndex) -> None:
    unsupported = {"answer": "Vincent van Gogh painted it [1].", "citations": ["[1]"]}
    app = create_app(
        model=research_model(synthesize=unsupported),
        providers=[CorpusProvider(small_index)],
        config=ResearchConfig(),
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        # (The Eiffel Tower's source says when it was built, not who designed it.)
        default = await c.post("/run", json={"task": "Who designed the Eiffel Tower?"})
        off = await c.post("/run", json={"task": QUESTION, "support": "off"})
        bad = await c.post("/run", json={"task": QUESTION, "support": "magic"})
    # lexical: no source says it, so the sources do not say (an answer, not an error)
    assert default.status_code == 200 and default.json()["status"] == "not_found"
    assert off.status_code == 200 and off.json()["citations"]["method"] == "off"
    assert bad.status_code == 400
