"""OpenAIModel: any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

Retries with exponential backoff and jitter on transient errors only (timeouts,
connection errors, 429 and 5xx); a 4xx is a terminal error and is raised at once.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

import httpx
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

from guardsearch.core.errors import ModelError
from guardsearch.core.messages import Completion, ModelRequest
from guardsearch.core.usage import Usage
from guardsearch.models.base import ensure_real_models_allowed

_TRANSIENT_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class _Transient(Exception):
    pass


def _is_transient(exc: BaseException) -> bool:
    return isinstance(exc, _Transient | httpx.TimeoutException | httpx.TransportError)


@dataclass
class OpenAIModel:
    """Chat completions over HTTP. The key comes from `api_key` or the env var `key_env`."""

    base_url: str
    model: str
    api_key: str | None = None
    key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 120.0
    max_attempts: int = 4
    max_wait_s: float = 20.0
    price_prompt_per_mtok: float = 0.0
    price_completion_per_mtok: float = 0.0
    transport: httpx.AsyncBaseTransport | None = None
    # response_format json_schema: servers that honour it (vLLM, llama.cpp's server) decode
    # under the schema; set False for one that ignores it.
    constrained_decoding: bool = True

    @property
    def name(self) -> str:
        return self.model

    def _headers(self) -> dict[str, str]:
        key = self.api_key or os.environ.get(self.key_env)
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _payload(self, request: ModelRequest) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if request.seed is not None:
            payload["seed"] = request.seed
        if request.stop:
            payload["stop"] = list(request.stop)
        if request.json_schema is not None:
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": dict(request.json_schema)},
            }
        return payload

    async def complete(self, request: ModelRequest) -> Completion:
        if self.transport is None:
            ensure_real_models_allowed(self.name)
        url = self.base_url.rstrip("/") + "/chat/completions"
        started = time.perf_counter()
        async with httpx.AsyncClient(timeout=self.timeout_s, transport=self.transport) as client:
            try:
                async for attempt in AsyncRetrying(
                    stop=stop_after_attempt(self.max_attempts),
                    wait=wait_random_exponential(multiplier=0.5, max=self.max_wait_s),
                    retry=retry_if_exception(_is_transient),
                    reraise=True,
                ):
                    with attempt:
                        response = await client.post(
                            url, json=self._payload(request), headers=self._headers()
                        )
                        if response.status_code in _TRANSIENT_STATUS:
                            raise _Transient(f"HTTP {response.status_code}: {response.text[:200]}")
            except (_Transient, httpx.HTTPError) as exc:
                raise ModelError(
                    f"{url} failed after {self.max_attempts} attempt(s): {exc}"
                ) from exc
        if response.status_code >= 400:
            raise ModelError(f"{url} answered HTTP {response.status_code}: {response.text[:500]}")
        return self._parse(response, time.perf_counter() - started)

    def _parse(self, response: httpx.Response, latency: float) -> Completion:
        try:
            body = response.json()
            choice = body["choices"][0]
            text = choice["message"].get("content") or ""
            raw_usage = body.get("usage") or {}
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ModelError(f"malformed chat completion: {response.text[:300]}") from exc
        prompt = int(raw_usage.get("prompt_tokens") or 0)
        completion = int(raw_usage.get("completion_tokens") or 0)
        cached = int((raw_usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
        cost = (
            prompt * self.price_prompt_per_mtok + completion * self.price_completion_per_mtok
        ) / 1e6
        return Completion(
            text=text,
            usage=Usage(
                calls=1,
                prompt_tokens=prompt,
                completion_tokens=completion,
                cached_prompt_tokens=cached,
                cost=cost,
            ),
            latency_s=latency,
            model=self.model,
            finish_reason=choice.get("finish_reason") or "stop",
        )
