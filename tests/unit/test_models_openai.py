"""OpenAIModel against a mock HTTP transport: parsing, retries, terminal errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from guardsearch import Message, ModelError, ModelRequest, OpenAIModel, Usage

REQUEST = ModelRequest(messages=(Message("system", "be brief"), Message("user", "hi")))
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}}


def ok_body(text: str = "hello", **usage: Any) -> dict[str, Any]:
    return {
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": usage or {"prompt_tokens": 12, "completion_tokens": 3},
    }


class Server:
    """Answers each POST with the next (status, body); records what it was sent."""

    def __init__(self, *replies: tuple[int, Any]) -> None:
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        status, body = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(body, Exception):
            raise body
        if isinstance(body, str):
            return httpx.Response(status, text=body)
        return httpx.Response(status, json=body)

    @property
    def payloads(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


def model_for(handler: Callable[[httpx.Request], httpx.Response], **kw: Any) -> OpenAIModel:
    return OpenAIModel(
        base_url="http://llm.test/v1/",
        model="test-model",
        api_key="sk-test",
        max_wait_s=0.01,
        transport=httpx.MockTransport(handler),
        **kw,
    )


async def test_a_completion_is_parsed_with_its_usage() -> None:
    completion = await model_for(Server((200, ok_body("hello")))).complete(REQUEST)
    assert completion.text == "hello"
    assert completion.usage == Usage(calls=1, prompt_tokens=12, completion_tokens=3)
    assert (completion.model, completion.finish_reason) == ("test-model", "stop")


async def test_cached_prompt_tokens_are_reported() -> None:
    body = ok_body(
        prompt_tokens=100, completion_tokens=5, prompt_tokens_details={"cached_tokens": 64}
    )
    completion = await model_for(Server((200, body))).complete(REQUEST)
    assert completion.usage.cached_prompt_tokens == 64


async def test_cost_follows_the_configured_prices() -> None:
    body = ok_body(prompt_tokens=1_000_000, completion_tokens=500_000)
    model = model_for(Server((200, body)), price_prompt_per_mtok=0.5, price_completion_per_mtok=2.0)
    assert (await model.complete(REQUEST)).usage.cost == pytest.approx(1.5)


async def test_the_request_is_posted_to_chat_completions_with_the_key() -> None:
    server = Server((200, ok_body()))
    await model_for(server).complete(REQUEST)
    (sent,) = server.requests
    assert str(sent.url) == "http://llm.test/v1/chat/completions"
    assert sent.headers["Authorization"] == "Bearer sk-test"


async def test_the_payload_carries_messages_and_deterministic_settings() -> None:
    server = Server((200, ok_body()))
    await model_for(server).complete(REQUEST)
    (payload,) = server.payloads
    assert payload["model"] == "test-model"
    assert payload["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
    ]
    assert (payload["temperature"], payload["seed"], payload["max_tokens"]) == (0.0, 0, 512)


async def test_a_json_schema_is_sent_as_response_format() -> None:
    server = Server((200, ok_body('{"n": 1}')))
    request = ModelRequest(messages=REQUEST.messages, json_schema=SCHEMA)
    await model_for(server, structured="json_schema").complete(request)
    assert server.payloads[0]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "output", "schema": SCHEMA},
    }


async def test_no_response_format_is_sent_without_a_schema() -> None:
    server = Server((200, ok_body()))
    await model_for(server).complete(REQUEST)
    assert "response_format" not in server.payloads[0]


async def test_a_429_is_retried_and_the_retry_succeeds() -> None:
    server = Server((429, {"error": "slow down"}), (200, ok_body("finally")))
    completion = await model_for(server).complete(REQUEST)
    assert completion.text == "finally"
    assert len(server.requests) == 2


async def test_a_connection_error_is_retried() -> None:
    server = Server((0, httpx.ConnectError("refused")), (200, ok_body("back")))
    assert (await model_for(server).complete(REQUEST)).text == "back"


async def test_a_persistent_5xx_is_a_model_error_after_max_attempts() -> None:
    server = Server((503, {"error": "overloaded"}))
    with pytest.raises(ModelError, match="failed after 3 attempt"):
        await model_for(server, max_attempts=3).complete(REQUEST)
    assert len(server.requests) == 3


async def test_a_400_is_not_retried_and_is_a_model_error() -> None:
    server = Server((400, {"error": "bad request"}), (200, ok_body()))
    with pytest.raises(ModelError, match="HTTP 400"):
        await model_for(server).complete(REQUEST)
    assert len(server.requests) == 1


async def test_a_body_that_is_not_json_is_a_model_error() -> None:
    with pytest.raises(ModelError, match="malformed chat completion"):
        await model_for(Server((200, "<html>oops</html>"))).complete(REQUEST)


async def test_a_body_without_choices_is_a_model_error() -> None:
    with pytest.raises(ModelError, match="malformed chat completion"):
        await model_for(Server((200, {"choices": []}))).complete(REQUEST)


async def test_a_null_content_is_an_empty_text() -> None:
    body = {"choices": [{"message": {"content": None}}]}
    completion = await model_for(Server((200, body))).complete(REQUEST)
    assert completion.text == ""
    assert completion.usage.calls == 1
