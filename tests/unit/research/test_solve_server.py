"""`POST /solve`: a guarded search of a built-in app over HTTP (ASGI, scripted model)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest

from guardsearch import ScriptedModel
from guardsearch.core.messages import Completion, ModelRequest
from guardsearch.server import create_app

SOLVING = ['{"steps": ["5 * 6"]}', '{"steps": ["30 - 10"]}', '{"steps": ["4 + 20"]}']


async def client_for(model: object, **kw: object) -> httpx.AsyncClient:
    app = create_app(model=model, providers=[], **kw)  # type: ignore[arg-type]
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with await client_for(ScriptedModel(SOLVING)) as c:
        yield c


async def test_solve_game24_returns_the_winning_path(client: httpx.AsyncClient) -> None:
    response = await client.post("/solve", json={"problem": {"numbers": "4 5 6 10"}})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["succeeded"] is True and body["termination"] == "success"
    assert body["app"] == "game24" and body["strategy"] == "astar"
    assert body["path"][-1] == "4 + 20 = 24 (left: 24)"
    assert body["calls"] == 3 and body["tokens"] > 0


async def test_a_spent_budget_is_a_failed_search_not_an_error() -> None:
    async with await client_for(ScriptedModel(SOLVING)) as c:
        body = (
            await c.post(
                "/solve",
                json={
                    "problem": {"numbers": "4 5 6 10"},
                    "strategy": "dfs",
                    "budget": {"calls": 1},
                },
            )
        ).json()
    assert body["succeeded"] is False and body["termination"] == "budget_exhausted"
    assert body["calls"] == 1


def by_numbers(request: ModelRequest) -> str:
    """The proposer's answer for the numbers left (whatever the seed or the order)."""
    left = request.messages[-1].content.split("Input: ", 1)[1].splitlines()[0]
    steps = {"4 5 6 10": "5 * 6", "4 10 30": "30 - 10", "4 20": "4 + 20"}
    return json.dumps({"steps": [steps.get(left, "4 + 5")]})


async def test_concurrency_is_a_plain_option_of_solve() -> None:
    bodies = []
    for options in ({}, {"concurrency": 4, "samples": 2}, {"samples": 2}):
        async with await client_for(ScriptedModel(by_numbers)) as c:
            response = await c.post(
                "/solve", json={"problem": {"numbers": "4 5 6 10"}, "options": options}
            )
        assert response.status_code == 200, response.text
        bodies.append({k: v for k, v in response.json().items() if k != "seconds"})
    assert bodies[0]["succeeded"] is True
    assert bodies[1] == bodies[2]  # the same search, the calls of an expansion at once


@pytest.mark.parametrize(
    ("request_body", "message"),
    [
        ({"problem": {"numbers": "4 5 6 10"}, "app": "os:system"}, "unknown app 'os:system'"),
        ({"problem": {"numbers": "4 5 6 10"}, "strategy": "magic"}, "unknown strategy"),
        ({"problem": {"numbers": "four"}}, "Game of 24 needs numbers"),
        ({"problem": {"numbers": "4 5 6 10"}, "options": {"nope": 1}}, "unknown option"),
        ({"problem": {"numbers": "4 5 6 10"}, "options": {"heuristic": "x"}}, "allowed: "),
        ({"problem": {"numbers": "4 5 6 10"}, "options": {"trace": "x"}}, "unknown option"),
        ({"problem": {"numbers": "4 5 6 10"}, "options": {"budget": 3}}, "unknown option"),
        ({"problem": {"numbers": "4 5 6 10"}, "options": {"width": "3"}}, "valid integer"),
        ({"problem": {"numbers": "4 5 6 10"}, "options": {"samples": 10**9}}, "less than"),
        ({"problem": {"numbers": "4 5 6 10"}, "options": {"concurrency": 0}}, "concurrency"),
        ({"problem": {"numbers": "4 5 6 10"}, "budget": {"calls": 10_000}}, "capped at 200"),
    ],
)
async def test_bad_requests_get_a_clear_400(
    client: httpx.AsyncClient, request_body: dict[str, object], message: str
) -> None:
    response = await client.post("/solve", json=request_body)
    assert response.status_code == 400, response.text
    assert message in response.json()["error"]["message"]


async def test_a_failing_model_is_a_502_not_a_crash() -> None:
    from guardsearch.core.errors import ModelError

    class Down:
        name = "down"

        async def complete(self, request: ModelRequest) -> Completion:
            raise ModelError("connection refused")

    async with await client_for(Down()) as c:
        response = await c.post("/solve", json={"problem": {"numbers": "4 5 6 10"}})
    assert response.status_code == 502
    assert response.json()["error"]["type"] == "model_error"
