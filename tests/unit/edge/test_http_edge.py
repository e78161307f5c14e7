"""The HTTP edge (ASGI, scripted model): bodies, error shapes, options, numbers, keys, logs."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from guardsearch import ScriptedModel
from guardsearch.search.strategies.base import strategy_names
from guardsearch.server import create_app
from guardsearch.server.security import BodyLimit, HideRunIds, key_id, read_keys

SOLVING = ['{"steps": ["5 * 6"]}', '{"steps": ["30 - 10"]}', '{"steps": ["4 + 20"]}']
JSON = {"content-type": "application/json"}


def client_for(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


@pytest.fixture(autouse=True)
def no_keys_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GUARDSEARCH_API_KEY", raising=False)
    monkeypatch.delenv("GUARDSEARCH_API_KEY_FILE", raising=False)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(create_app(model=ScriptedModel(SOLVING * 20), providers=[])) as c:
        yield c


def assert_error_shape(response: httpx.Response, status: int, kind: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}, body
    assert body["error"]["type"] == kind and body["error"]["message"]
    assert isinstance(body["error"]["retryable"], bool)


# -- item 8: a body shorter than its Content-Length is never passed on ------------------


class Recorder:
    """An ASGI app that records the bodies it was given."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        message = await receive()
        self.bodies.append(message.get("body", b""))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


async def drive(middleware: Any, messages: list[dict[str, Any]], length: int | None) -> list[Any]:
    headers = [(b"content-type", b"application/json")]
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    scope = {"type": "http", "method": "POST", "path": "/run", "headers": headers}
    queue = list(messages)
    sent: list[Any] = []

    async def receive() -> dict[str, Any]:
        return queue.pop(0) if queue else {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    await middleware(scope, receive, send)
    return sent


async def test_a_client_that_leaves_mid_body_runs_nothing() -> None:
    app = Recorder()
    part = {"type": "http.request", "body": b'{"task": "Who pa', "more_body": True}
    sent = await drive(BodyLimit(app, 1000), [part, {"type": "http.disconnect"}], 40)
    assert app.bodies == [] and sent == []


async def test_a_body_shorter_than_its_content_length_is_a_400() -> None:
    app = Recorder()
    short = {"type": "http.request", "body": b'{"task": "x"}', "more_body": False}
    sent = await drive(BodyLimit(app, 1000), [short], 40)
    assert app.bodies == []
    assert sent[0]["status"] == 400
    assert json.loads(sent[1]["body"])["error"]["type"] == "invalid_request"


async def test_a_whole_body_is_passed_on_once() -> None:
    app = Recorder()
    body = b'{"task": "x"}'
    chunks = [
        {"type": "http.request", "body": body[:5], "more_body": True},
        {"type": "http.request", "body": body[5:], "more_body": False},
    ]
    sent = await drive(BodyLimit(app, 1000), chunks, len(body))
    assert app.bodies == [body] and sent[0]["status"] == 200
    chunked = await drive(BodyLimit(Recorder(), 1000), chunks, None)  # no Content-Length
    assert chunked[0]["status"] == 200


@pytest.mark.parametrize("length", [b"-1", b"12x", b"9" * 40])
async def test_a_malformed_content_length_is_a_400(length: bytes) -> None:
    app = Recorder()
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/run",
        "headers": [(b"content-length", length)],
    }
    sent: list[Any] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    await BodyLimit(app, 1000)(scope, receive, send)
    assert app.bodies == [] and sent[0]["status"] == 400


# -- item 9: every error in the documented shape ----------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "content", "status", "kind"),
    [
        ("GET", "/nope", None, 404, "not_found"),
        ("GET", "/run", None, 405, "method_not_allowed"),
        ("DELETE", "/runs/abc", None, 405, "method_not_allowed"),
        ("PUT", "/solve", b"{}", 405, "method_not_allowed"),
        ("POST", "/solve", b'\xff\xfe{"problem": {}}', 400, "invalid_request"),
        ("POST", "/run", b'{"task": "caf\xe9"}', 400, "invalid_request"),
        ("POST", "/solve", b"[" * 20_000 + b"]" * 20_000, 400, "invalid_request"),
        ("POST", "/solve", b'{"a":' * 3000 + b"1" + b"}" * 3000, 400, "invalid_request"),
        (
            "POST",
            "/solve",
            b'{"problem": {"numbers": 1' + b"0" * 5000 + b"}}",
            400,
            "invalid_request",
        ),
        ("POST", "/solve", b"not json", 400, "invalid_request"),
        ("POST", "/solve", b"", 400, "invalid_request"),
        ("POST", "/run", b'{"task": "x", "token_budget": 1e999}', 400, "invalid_request"),
        ("POST", "/solve", b'{"problem": {}, "budget": {"calls": NaN}}', 400, "invalid_request"),
        ("GET", "/runs/" + "x" * 3000, None, 404, "not_found"),
    ],
)
async def test_bad_requests_answer_in_the_documented_shape(
    client: httpx.AsyncClient,
    method: str,
    path: str,
    content: bytes | None,
    status: int,
    kind: str,
) -> None:
    response = await client.request(method, path, content=content, headers=JSON)
    assert_error_shape(response, status, kind)


# -- item 3: options are checked against each strategy's declared options ---------------


@pytest.mark.parametrize("strategy", strategy_names())
@pytest.mark.parametrize("option", ["trace", "budget", "model", "resume", "on_expansion"])
async def test_keywords_of_search_itself_are_not_options(
    client: httpx.AsyncClient, strategy: str, option: str
) -> None:
    response = await client.post(
        "/solve",
        json={"problem": {"numbers": "4 5 6 10"}, "strategy": strategy, "options": {option: "x"}},
    )
    assert_error_shape(response, 400, "invalid_request")
    message = response.json()["error"]["message"]
    assert f"unknown option(s) for strategy {strategy!r}: {option}" in message
    assert "allowed: " in message and "samples" in message


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"should_stop": "x"}, "unknown option"),
        ({"summarizer": 1}, "unknown option"),
        ({"width": "3"}, "valid integer"),
        ({"width": True}, "valid integer"),
        ({"samples": 100_000}, "less than or equal to 64"),
        ({"temperature": 1e308}, "less than or equal to 2"),
        ({"seed": -1}, "greater than or equal to 0"),
        ({"rmax": [1]}, "valid integer"),
    ],
)
async def test_option_values_are_typed_and_bounded(
    client: httpx.AsyncClient, options: dict[str, Any], message: str
) -> None:
    response = await client.post(
        "/solve", json={"problem": {"numbers": "4 5 6 10"}, "options": options}
    )
    assert_error_shape(response, 400, "invalid_request")
    assert message in response.json()["error"]["message"]


# -- item 2: numbers bounded before conversion, nothing heavy on the event loop ---------


async def test_a_huge_exponent_is_a_quick_400_and_healthz_keeps_answering(
    client: httpx.AsyncClient,
) -> None:
    async def slowest_health() -> float:
        worst = 0.0
        for _ in range(20):
            started = time.perf_counter()
            assert (await client.get("/healthz")).status_code == 200
            worst = max(worst, time.perf_counter() - started)
        return worst

    started = time.perf_counter()
    bodies = [
        {"problem": {"numbers": f"1e{10**k} 1 1 1"}, "budget": {"calls": 1}} for k in range(3, 8)
    ]
    responses, worst = await asyncio.gather(
        asyncio.gather(*(client.post("/solve", json=b) for b in bodies)), slowest_health()
    )
    for response in responses:
        assert_error_shape(response, 400, "invalid_request")
        assert "exponent is out of range" in response.json()["error"]["message"]
    assert time.perf_counter() - started < 2.0
    assert worst < 0.2


# -- item 9: one puzzle check for every way in ------------------------------------------


@pytest.mark.parametrize("numbers", ["4", "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"])
async def test_a_puzzle_of_1_or_20_numbers_is_refused_over_http(
    client: httpx.AsyncClient, numbers: str
) -> None:
    response = await client.post("/solve", json={"problem": {"numbers": numbers}})
    assert_error_shape(response, 400, "invalid_request")
    assert "takes 2 to 6 numbers" in response.json()["error"]["message"]


# -- item 11: several keys; an async run is its creator's -------------------------------


def test_keys_come_from_values_and_files(tmp_path: Path) -> None:
    keyfile = tmp_path / "keys"
    keyfile.write_text("# team keys\nalpha-key-1\n\n  beta-key-2  # ops\nalpha-key-1\n")
    assert read_keys(["one-key, two-key three-key"], [keyfile]) == [
        "one-key",
        "two-key",
        "three-key",
        "alpha-key-1",
        "beta-key-2",
    ]
    with pytest.raises(Exception, match="cannot read API key file"):
        read_keys([], [tmp_path / "missing"])
    assert key_id("alpha-key-1") != key_id("beta-key-2") and "alpha" not in key_id("alpha-key-1")


async def poll(client: httpx.AsyncClient, url: str, key: str) -> httpx.Response:
    for _ in range(200):
        response = await client.get(url, headers={"X-API-Key": key})
        if response.status_code != 200 or response.json()["status"] in ("succeeded", "failed"):
            return response
        await asyncio.sleep(0.01)
    return response


async def test_an_async_run_is_served_only_to_the_key_that_started_it(tmp_path: Path) -> None:
    keyfile = tmp_path / "keys"
    keyfile.write_text("carol-key-3\n")
    app = create_app(
        model=ScriptedModel(["{}"] * 10),
        providers=[],
        api_key=["alice-key-1", "bob-key-2"],
        api_key_file=keyfile,
    )
    async with client_for(app) as c:
        accepted = await c.post(
            "/run",
            json={"task": "Who painted it?", "async": True},
            headers={"Authorization": "Bearer alice-key-1"},
        )
        assert accepted.status_code == 202
        url = accepted.json()["status_url"]
        assert len(accepted.json()["id"]) >= 20  # a token, not a counter
        mine = await poll(c, url, "alice-key-1")
        assert mine.status_code == 200 and mine.json()["status"] in ("succeeded", "failed")
        for other in ("bob-key-2", "carol-key-3"):
            theirs = await c.get(url, headers={"X-API-Key": other})
            assert_error_shape(theirs, 404, "not_found")
            unknown = await c.get("/runs/nope", headers={"X-API-Key": other})
            assert theirs.json() == unknown.json()  # the same answer as for no run at all
        assert (await c.get(url)).status_code == 401
        assert (await c.get(url, headers={"X-API-Key": "alice-key-1x"})).status_code == 401


async def test_keys_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    keyfile = tmp_path / "keys"
    keyfile.write_text("file-key-9\n")
    monkeypatch.setenv("GUARDSEARCH_API_KEY", "env-key-1,env-key-2")
    monkeypatch.setenv("GUARDSEARCH_API_KEY_FILE", str(keyfile))
    async with client_for(create_app(model=ScriptedModel(["{}"]), providers=[])) as c:
        for key in ("env-key-1", "env-key-2", "file-key-9"):
            response = await c.post(
                "/solve", json={"problem": {"numbers": "1"}}, headers={"X-API-Key": key}
            )
            assert response.status_code == 400  # past the key check
        assert (await c.post("/solve", json={})).status_code == 401


def test_access_logs_hide_async_run_ids() -> None:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", "/runs/Zx81_secret-token?x=1", "1.1", 200),
        None,
    )
    assert HideRunIds().filter(record)
    line = record.getMessage()
    assert "secret" not in line and "/runs/…?x=1" in line
    plain = logging.LogRecord("x", logging.INFO, __file__, 1, "GET /runs/abc123 done", None, None)
    HideRunIds().filter(plain)
    assert "abc123" not in plain.getMessage()


async def test_the_openapi_document_describes_the_errors_sent(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    assert "HTTPValidationError" not in json.dumps(spec)  # FastAPI's 422, never sent
    for path, operations in spec["paths"].items():
        for operation in operations.values():
            if path == "/healthz":
                continue
            for code in ("400", "401", "413"):
                schema = operation["responses"][code]["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorResponse"}, (path, code)
