"""OpenAIModel against recorded exchanges of vLLM, Ollama, OpenAI and llama.cpp servers.

Structured-output negotiation (probe, cache, forcing, fallback), Retry-After, terminal
and transient errors, malformed bodies, a server that vanishes, and the pooled client.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.unit.servers import exchanges as ex

from guardsearch import ConfigError, Message, ModelError, ModelRequest, OpenAIModel
from guardsearch.core.events import Trace
from guardsearch.models import structured
from guardsearch.models.llamacpp import schema_to_gbnf
from guardsearch.models.metered import Metered
from guardsearch.models.openai import retry_after_seconds
from guardsearch.models.spec import model_from_spec

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
ASK = ModelRequest(messages=(Message("user", "a number as JSON"),), json_schema=SCHEMA)
PLAIN = ModelRequest(messages=(Message("user", "hi"),))

Reply = tuple[int, Any] | tuple[int, Any, dict[str, str]] | Exception
Handler = Callable[[dict[str, Any]], Reply]


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path))
    monkeypatch.delenv(structured.STRUCTURED_ENV, raising=False)
    yield tmp_path


class FakeServer:
    """A recorded server: `handler(payload)` gives (status, body[, headers]) or raises."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.payloads: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        payload = json.loads(request.content)
        self.payloads.append(payload)
        reply = self.handler(payload)
        if isinstance(reply, Exception):
            raise reply
        status, body, *rest = reply
        headers = rest[0] if rest else {}
        if isinstance(body, str):
            return httpx.Response(status, text=body, headers=headers)
        return httpx.Response(status, json=body, headers=headers)

    def modes(self) -> list[str]:
        """Which structured-output field each request carried."""
        return [_mode_of(p) for p in self.payloads]


def _mode_of(payload: dict[str, Any]) -> str:
    if "response_format" in payload:
        return str(payload["response_format"]["type"])
    for key in ("guided_json", "grammar"):
        if key in payload:
            return key
    return "none"


def with_text(body: dict[str, Any], text: str) -> dict[str, Any]:
    copy = json.loads(json.dumps(body))
    copy["choices"][0]["message"]["content"] = text
    return copy


def model(server: FakeServer, **kw: Any) -> OpenAIModel:
    return OpenAIModel(
        base_url="http://llm.test/v1",
        model="m",
        max_wait_s=0.01,
        transport=httpx.MockTransport(server),
        **kw,
    )


def llama_cpp_python(payload: dict[str, Any]) -> Reply:
    """llama-cpp-python's server: a grammar and json_object (+schema) work, json_schema
    is a 500."""
    kind = payload.get("response_format", {}).get("type")
    if kind == "json_schema":
        return (500, ex.LLAMA_CPP_PYTHON_500)
    if kind == "json_object" or "grammar" in payload:
        return (200, ex.LLAMA_CPP_PYTHON_OK)
    return (200, with_text(ex.LLAMA_CPP_PYTHON_OK, "Hello!"))


# --- negotiation ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "mode"),
    [(ex.OPENAI_OK, "json_schema"), (ex.VLLM_OK, "json_schema"), (ex.OLLAMA_OK, "json_schema")],
)
async def test_servers_with_json_schema_negotiate_it_with_one_probe(
    body: dict[str, Any], mode: str
) -> None:
    server = FakeServer(lambda p: (200, body))
    backend = model(server)
    assert (await backend.structured_mode())["mode"] == mode
    assert server.modes() == ["json_schema"]
    assert server.payloads[0]["response_format"]["json_schema"]["schema"] == (
        structured.PROBE_SCHEMA
    )


async def test_llama_cpp_python_server_negotiates_the_embedded_grammar() -> None:
    server = FakeServer(llama_cpp_python)
    backend = model(server)
    completion = await backend.complete(ASK)
    assert completion.details["structured"] == "grammar"
    # probe json_schema (refused, not retried), probe grammar, then the call.
    assert server.modes() == ["json_schema", "grammar", "grammar"]
    assert server.payloads[-1]["grammar"] == schema_to_gbnf(SCHEMA)  # the embedded grammar
    negotiated = await backend.structured_mode()
    assert negotiated["probes"][0] == {"mode": "json_schema", "result": "refused", "status": 500}


async def test_without_llama_cpp_here_llama_cpp_python_gets_json_object_and_the_schema(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(structured, "_grammar_available", lambda: False)
    server = FakeServer(llama_cpp_python)
    completion = await model(server).complete(ASK)
    assert completion.details["structured"] == "json_object"
    assert server.modes() == ["json_schema", "json_object", "json_object"]
    assert server.payloads[-1]["response_format"] == {"type": "json_object", "schema": SCHEMA}


async def test_the_negotiated_mode_is_cached_per_server_and_model(home: Path) -> None:
    await model(FakeServer(llama_cpp_python)).structured_mode()
    cached = json.loads((home / structured.CACHE_FILE).read_text())
    assert cached["http://llm.test/v1#m"]["mode"] == "grammar"
    again = FakeServer(llama_cpp_python)
    await model(again).complete(ASK)
    assert again.modes() == ["grammar"]  # no probe the second time
    other = FakeServer(llama_cpp_python)
    await OpenAIModel(
        base_url="http://llm.test/v1", model="other", transport=httpx.MockTransport(other)
    ).structured_mode()
    assert other.modes()[0] == "json_schema"  # another model is probed afresh


async def test_a_server_that_ignores_every_field_negotiates_none() -> None:
    server = FakeServer(lambda p: (200, with_text(ex.OLLAMA_OK, "Hello there!")))
    negotiated = await model(server).structured_mode()
    assert negotiated["mode"] == "none"
    assert {p["result"] for p in negotiated["probes"]} == {"ignored"}
    completion = await model(server).complete(ASK)
    assert completion.details["structured"] == "none"
    last = server.payloads[-1]
    assert _mode_of(last) == "none"
    # The prompt did mention JSON, so no schema hint was added.
    assert last["messages"] == [{"role": "user", "content": "a number as JSON"}]


async def test_mode_none_asks_for_json_when_the_prompt_does_not() -> None:
    server = FakeServer(lambda p: (200, ex.OLLAMA_OK))
    request = ModelRequest(messages=(Message("user", "a number"),), json_schema=SCHEMA)
    await model(server, structured="none").complete(request)
    (payload,) = server.payloads
    assert "JSON Schema" in payload["messages"][-1]["content"]


async def test_grammar_mode_sends_a_gbnf_grammar() -> None:
    pytest.importorskip("llama_cpp")
    server = FakeServer(lambda p: (200, ex.LLAMA_SERVER_OK))
    await model(server, structured="grammar").complete(ASK)
    assert "root ::=" in server.payloads[0]["grammar"]


async def test_guided_json_mode_sends_the_schema_top_level() -> None:
    server = FakeServer(lambda p: (200, ex.VLLM_OK))
    await model(server, structured="guided_json").complete(ASK)
    assert server.payloads[0]["guided_json"] == SCHEMA


async def test_the_spec_forces_a_mode_and_the_env_var_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = "openai:http://llm.test/v1#qwen?structured=json_object&timeout=5&connections=3"
    backend = model_from_spec(spec)
    assert isinstance(backend, OpenAIModel)
    assert (backend.structured, backend.timeout_s, backend.max_connections) == (
        "json_object",
        5.0,
        3,
    )
    assert (await backend.structured_mode()) == {"mode": "json_object", "source": "spec"}
    monkeypatch.setenv(structured.STRUCTURED_ENV, "none")
    server = FakeServer(lambda p: (200, ex.OLLAMA_OK))
    assert (await model(server).structured_mode()) == {"mode": "none", "source": "env"}
    assert server.payloads == []  # forcing needs no probe


@pytest.mark.parametrize(
    "spec",
    [
        "openai:http://x/v1#m?structured=xml",
        "openai:http://x/v1#m?colour=red",
        "openai:http://x/v1#m?timeout=-1",
        "openai:http://x/v1#m?connections=many",
    ],
)
def test_bad_openai_spec_options_are_config_errors(spec: str) -> None:
    with pytest.raises(ConfigError):
        model_from_spec(spec)


async def test_a_refused_mode_falls_back_once_and_is_never_retried() -> None:
    # The cache says json_schema (an upgrade changed the server): the call is refused
    # once, falls back to the next mode, and the next call goes straight there.
    key = structured.cache_key("http://llm.test/v1", "m")
    structured.store_cached(key, {"mode": "json_schema"})
    server = FakeServer(llama_cpp_python)
    backend = model(server, max_attempts=4)
    trace = Trace()
    metered = Metered(backend, trace=trace)
    completion = await metered.complete(ASK)
    assert server.modes() == ["json_schema", "grammar"]
    fallback = completion.details["structured_fallback"]
    assert (fallback["from"], fallback["to"], fallback["status"]) == (
        "json_schema",
        "grammar",
        500,
    )
    (note,) = trace.of_kind("note")
    assert note.data["structured_fallback"]["from"] == "json_schema"
    (call,) = trace.of_kind("model_call")
    assert call.data["server"]["structured"] == "grammar"
    await metered.complete(ASK)
    assert server.modes()[-1] == "grammar"
    assert structured.load_cached(key)["mode"] == "grammar"  # type: ignore[index]


async def test_a_forced_mode_the_server_refuses_is_a_terminal_model_error() -> None:
    server = FakeServer(llama_cpp_python)
    with pytest.raises(ModelError, match="refused the forced structured-output mode"):
        await model(server, structured="json_schema").complete(ASK)
    assert len(server.payloads) == 1


async def test_openai_rejecting_a_schema_falls_back_past_response_format() -> None:
    def openai(payload: dict[str, Any]) -> Reply:
        if "response_format" in payload:
            return (400, ex.OPENAI_SCHEMA_400)
        return (200, ex.OPENAI_OK)

    server = FakeServer(openai)
    negotiated = await model(server).structured_mode()
    results = {p["mode"]: p["result"] for p in negotiated["probes"]}
    assert results["json_schema"] == "refused"
    assert results.get("json_object", "refused") == "refused"
    assert negotiated["mode"] in ("guided_json", "grammar")  # the next that answers JSON


async def test_an_old_vllm_is_refused_json_schema_and_takes_json_object() -> None:
    def old_vllm(payload: dict[str, Any]) -> Reply:
        kind = payload.get("response_format", {}).get("type")
        if kind == "json_schema":
            return (400, ex.VLLM_OLD_400)
        if kind == "json_object":
            return (200, ex.VLLM_OK)
        return (200, with_text(ex.VLLM_OK, "Hello!"))  # vLLM ignores a `grammar` field

    negotiated = await model(FakeServer(old_vllm)).structured_mode()
    assert negotiated["mode"] == "json_object"
    results = [(p["mode"], p["result"]) for p in negotiated["probes"]]
    assert ("grammar", "ignored") in results or not structured._grammar_available()


async def test_a_probe_against_a_dead_server_is_an_error_and_caches_nothing(
    home: Path,
) -> None:
    server = FakeServer(lambda p: httpx.ConnectError("connection refused"))
    with pytest.raises(ModelError, match="connection refused"):
        await model(server, max_attempts=2).complete(ASK)
    assert not (home / structured.CACHE_FILE).exists()


# --- responses ---------------------------------------------------------------------


async def test_openai_cached_prompt_tokens_are_read() -> None:
    completion = await model(FakeServer(lambda p: (200, ex.OPENAI_OK))).complete(PLAIN)
    assert completion.usage.prompt_tokens == 1117
    assert completion.usage.cached_prompt_tokens == 1024


async def test_vllm_null_prompt_token_details_are_no_cached_tokens() -> None:
    completion = await model(FakeServer(lambda p: (200, ex.VLLM_OK))).complete(PLAIN)
    assert (completion.usage.prompt_tokens, completion.usage.cached_prompt_tokens) == (35, 0)


async def test_llama_server_timings_are_kept_and_give_the_cached_tokens() -> None:
    completion = await model(FakeServer(lambda p: (200, ex.LLAMA_SERVER_OK))).complete(PLAIN)
    assert completion.usage.cached_prompt_tokens == 24
    assert completion.details["server_timings"]["prompt_ms"] == 80.5


async def test_ollama_model_not_found_is_terminal() -> None:
    server = FakeServer(lambda p: (404, ex.OLLAMA_404))
    with pytest.raises(ModelError, match="not found, try pulling"):
        await model(server).complete(PLAIN)
    assert len(server.payloads) == 1


@pytest.mark.parametrize("text", ['{"choices": [{"message": {"content": "x"', "<html>502</html>"])
async def test_malformed_json_is_a_model_error(text: str) -> None:
    with pytest.raises(ModelError, match="malformed chat completion"):
        await model(FakeServer(lambda p: (200, text))).complete(PLAIN)


# --- transient errors ---------------------------------------------------------------


def test_retry_after_takes_seconds_and_http_dates() -> None:
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds("Wed, 25 Nov 2026 10:00:10 GMT", now=1795600800.0) == 10.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


async def test_a_429_with_retry_after_waits_what_the_server_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    waits: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr("asyncio.sleep", fake_sleep)
    replies = iter([(429, ex.OPENAI_429, {"Retry-After": "7"}), (200, ex.OPENAI_OK)])
    server = FakeServer(lambda p: next(replies))
    completion = await model(server).complete(PLAIN)
    assert completion.usage.prompt_tokens == 1117
    assert waits == [7.0]


async def test_a_503_retry_after_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr("asyncio.sleep", fake_sleep)
    replies = iter([(503, "busy", {"Retry-After": "3600"}), (200, ex.OLLAMA_OK)])
    await model(FakeServer(lambda p: next(replies)), max_retry_after_s=2.0).complete(PLAIN)
    assert waits == [2.0]


async def test_a_persistent_vllm_500_fails_after_the_attempts() -> None:
    server = FakeServer(lambda p: (500, ex.VLLM_500))
    with pytest.raises(ModelError, match=r"failed after 3 attempt.*EngineDeadError"):
        await model(server, max_attempts=3).complete(PLAIN)
    assert len(server.payloads) == 3


async def test_a_server_that_vanishes_mid_run_is_a_model_error_after_retries() -> None:
    calls = iter(range(100))

    def vanishing(payload: dict[str, Any]) -> Reply:
        if next(calls) < 2:
            return (200, ex.LLAMA_CPP_PYTHON_OK)
        return httpx.RemoteProtocolError("Server disconnected without sending a response.")

    server = FakeServer(vanishing)
    backend = model(server, max_attempts=2, structured="json_object")
    trace = Trace()
    metered = Metered(backend, trace=trace)
    assert (await metered.complete(ASK)).usage.calls == 1
    assert (await metered.complete(ASK)).usage.calls == 1
    with pytest.raises(ModelError, match="Server disconnected"):
        await metered.complete(ASK)
    assert len(trace.of_kind("model_call")) == 2
    assert len(trace.of_kind("model_error")) == 1
    assert metered.usage.calls == 3  # the failed call is counted, its tokens are not


# --- the connection pool ------------------------------------------------------------


async def test_one_pooled_client_serves_every_call_and_closes() -> None:
    server = FakeServer(lambda p: (200, ex.OLLAMA_OK))
    backend = model(server, max_connections=2)
    backend.size_pool(6)
    await backend.complete(PLAIN)
    state = backend._state
    assert state is not None
    await backend.complete(PLAIN)
    assert backend._state is state
    pool = state.client._transport  # the mock transport stands in for the pool
    assert pool is backend.transport
    assert backend.max_connections == 6
    async with backend:
        pass
    assert backend._state is None and state.client.is_closed


def test_each_event_loop_gets_its_own_client() -> None:
    import asyncio

    server = FakeServer(lambda p: (200, ex.OLLAMA_OK))
    backend = model(server)
    asyncio.run(backend.complete(PLAIN))
    first = backend._state
    assert first is not None
    assert first.client.is_closed  # closed when asyncio.run shut its loop down
    asyncio.run(backend.complete(PLAIN))
    assert backend._state is not first
    assert len(server.payloads) == 2


async def test_the_pool_limits_follow_the_concurrency() -> None:
    backend = OpenAIModel(base_url="http://llm.test/v1", model="m", max_connections=2)
    backend.size_pool(5)
    pool = (await backend._loop_state()).client._transport._pool  # type: ignore[attr-defined]
    assert pool._max_connections == 5
    assert pool._max_keepalive_connections == 5
    await backend.aclose()


# --- guardsearch models --model ------------------------------------------------------


def test_models_json_shows_the_negotiated_mode_of_an_openai_spec() -> None:
    from typer.testing import CliRunner

    from guardsearch.cli import app

    runner = CliRunner()
    structured.store_cached(
        structured.cache_key("http://127.0.0.1:9/v1", "qwen"),
        {"mode": "json_object", "source": "probe", "probes": []},
    )
    result = runner.invoke(
        app, ["models", "--json", "--model", "openai:http://127.0.0.1:9/v1#qwen"]
    )
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)["model"]
    assert shown["structured"]["mode"] == "json_object"
    assert shown["structured"]["source"] == "cached"
    forced = runner.invoke(
        app, ["models", "--json", "--model", "openai:http://127.0.0.1:9/v1#x?structured=none"]
    )
    assert json.loads(forced.stdout)["model"]["structured"] == {"mode": "none", "source": "spec"}


def test_models_model_needs_real_models_to_probe() -> None:
    from typer.testing import CliRunner

    from guardsearch.cli import app

    result = CliRunner().invoke(
        app, ["models", "--json", "--model", "openai:http://127.0.0.1:9/v1#unprobed"]
    )
    assert result.exit_code == 2
    assert "real models are disabled" in json.loads(result.stdout)["error"]


async def test_a_search_sizes_the_pool_from_its_concurrency() -> None:
    from tests.unit.search.search_helpers import CountingSpace

    from guardsearch.search import search

    server = FakeServer(lambda p: (200, with_text(ex.VLLM_OK, "1, 2")))
    backend = model(server, max_connections=2)
    await search(CountingSpace(goal=2, depth_limit=2), "bfs", model=backend, concurrency=12)
    assert backend.max_connections == 12


async def test_body_options_of_the_spec_are_sent_with_every_call() -> None:
    backend = model_from_spec("openai:http://llm.test/v1#m?body.repeat_penalty=1.0&body.x=a")
    assert isinstance(backend, OpenAIModel)
    server = FakeServer(lambda p: (200, ex.LLAMA_CPP_PYTHON_OK))
    backend.transport = httpx.MockTransport(server)
    await backend.complete(PLAIN)
    assert (server.payloads[0]["repeat_penalty"], server.payloads[0]["x"]) == (1.0, "a")


async def test_json_object_bounds_free_strings_as_the_embedded_backend_does() -> None:
    server = FakeServer(lambda p: (200, ex.LLAMA_CPP_PYTHON_OK))
    request = ModelRequest(
        messages=ASK.messages,
        json_schema={"type": "object", "properties": {"s": {"type": "string"}}},
    )
    await model(server, structured="json_object").complete(request)
    sent = server.payloads[0]["response_format"]["schema"]
    assert sent["properties"]["s"]["maxLength"] > 0


async def test_a_server_negotiated_to_none_no_longer_counts_as_constrained() -> None:
    from guardsearch.models.base import enforces_schema

    server = FakeServer(lambda p: (200, with_text(ex.OLLAMA_OK, "Hello there!")))
    backend = model(server)
    assert enforces_schema(Metered(backend))
    await backend.structured_mode()
    assert not enforces_schema(Metered(backend))
    assert not enforces_schema(OpenAIModel(base_url="u", model="m", structured="none"))
