"""OpenAIModel: any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp servers).

One pooled `httpx.AsyncClient` per model object and event loop (keep-alive, at most
`max_connections` connections), closed by `aclose()`. Retries with exponential backoff
and jitter on transient errors only (timeouts, connection errors, 429 and 5xx), waiting
what a 429 or 503 says in `Retry-After`; any other 4xx is terminal and raised at once.
Structured output is negotiated per server (`models/structured.py`): a request field the
server refuses is terminal for that mode, never retried: the call falls back once to the
next mode and says so in `Completion.details`, which the trace records.
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import random
import time
import weakref
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

import httpx
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from guardsearch.core.errors import ModelError
from guardsearch.core.messages import Completion, ModelRequest
from guardsearch.core.usage import Usage
from guardsearch.models import structured
from guardsearch.models.base import ensure_real_models_allowed

_TRANSIENT_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
_RETRY_AFTER_STATUS = {429, 503}


class _Transient(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _Refused(Exception):
    """The server refused the request field of a structured-output mode (terminal)."""

    def __init__(self, mode: str, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body[:300]}")
        self.mode = mode
        self.status = status
        self.body = body


def _is_transient(exc: BaseException) -> bool:
    return isinstance(exc, _Transient | httpx.TimeoutException | httpx.TransportError)


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass
class _LoopState:
    """What belongs to one event loop: the connection pool and the negotiation lock.

    `closer` is a started async generator whose `finally` closes the pool: the loop
    finalizes open async generators when it shuts down (`asyncio.run` calls
    `shutdown_asyncgens`), so the pool is closed cleanly even by callers that never
    call `aclose()`.
    """

    loop: asyncio.AbstractEventLoop
    client: httpx.AsyncClient
    lock: asyncio.Lock
    closer: AsyncGenerator[None, None]


# Open pools per loop, held here so that a model dropped before its loop ends still has
# its pool closed at shutdown (the loop itself only holds async generators weakly).
_OPEN: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, set[AsyncGenerator[None, None]]] = (
    weakref.WeakKeyDictionary()
)


async def _close_at_shutdown(client: httpx.AsyncClient) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await client.aclose()


@dataclass
class OpenAIModel:
    """Chat completions over HTTP. The key comes from `api_key` or the env var `key_env`.

    `structured` forces a structured-output mode (`structured.MODES`; None or "auto":
    negotiate, unless `GUARDSEARCH_STRUCTURED` forces one). `timeout_s` bounds a whole
    call's reads, `connect_timeout_s` a connection; `max_connections` sizes the pool
    (`size_pool` raises it to a run's concurrency).
    """

    base_url: str
    model: str
    api_key: str | None = None
    key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 120.0
    connect_timeout_s: float = 10.0
    max_attempts: int = 4
    max_wait_s: float = 20.0
    max_retry_after_s: float = 60.0
    max_connections: int = 8
    structured: str | None = None
    # Server-specific request fields sent with every call (llama-cpp-python's
    # `repeat_penalty`, vLLM's `top_k`, ...): the spec option `body.NAME=VALUE`.
    extra_body: dict[str, Any] = field(default_factory=dict)
    price_prompt_per_mtok: float = 0.0
    price_completion_per_mtok: float = 0.0
    transport: httpx.AsyncBaseTransport | None = None
    # Whether the server decodes under a request's schema: False once the negotiated
    # structured-output mode is `none` (or set False for a server known to ignore it).
    constrained_decoding: bool = True
    _state: _LoopState | None = field(default=None, init=False, repr=False, compare=False)
    _mode: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.structured == "none":
            self.constrained_decoding = False

    @property
    def name(self) -> str:
        return self.model

    def _negotiated(self, entry: dict[str, Any]) -> dict[str, Any]:
        """Adopt a negotiated mode; with `none` the server no longer counts as constrained."""
        self._mode = entry
        if entry["mode"] == "none":
            self.constrained_decoding = False
        return entry

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def size_pool(self, concurrency: int) -> None:
        """Allow at least `concurrency` connections (before the first call opens the pool)."""
        self.max_connections = max(self.max_connections, int(concurrency))

    async def _loop_state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        if self._state is None or self._state.loop is not loop:
            # A pool belongs to the loop that opened it; each asyncio.run gets its own.
            limits = httpx.Limits(
                max_connections=self.max_connections,
                max_keepalive_connections=self.max_connections,
            )
            client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout_s, connect=self.connect_timeout_s),
                limits=limits,
                transport=self.transport,
            )
            closer = _close_at_shutdown(client)
            await anext(closer)
            _OPEN.setdefault(loop, set()).add(closer)
            self._state = _LoopState(loop, client, asyncio.Lock(), closer)
        return self._state

    async def aclose(self) -> None:
        """Close the connection pool (a later call opens a new one)."""
        state, self._state = self._state, None
        if state is not None and not state.loop.is_closed():
            _OPEN.get(state.loop, set()).discard(state.closer)
            await state.closer.aclose()

    async def __aenter__(self) -> OpenAIModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

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
        payload.update(self.extra_body)
        return payload

    def _wait(self, state: RetryCallState) -> float:
        outcome = state.outcome
        exc = outcome.exception() if outcome is not None else None
        if isinstance(exc, _Transient) and exc.retry_after is not None:
            return min(exc.retry_after, self.max_retry_after_s)
        # Full jitter: a random wait up to 0.5 * 2^n, capped.
        return random.uniform(0, min(self.max_wait_s, 0.5 * 2 ** (state.attempt_number - 1)))

    async def _post(self, payload: dict[str, Any], mode: str | None) -> httpx.Response:
        """POST with retries on transient errors; a refused mode raises `_Refused` at once."""
        client = (await self._loop_state()).client
        try:
            async for attempt in AsyncRetrying(
                stop=stop_after_attempt(self.max_attempts),
                wait=self._wait,
                retry=retry_if_exception(_is_transient),
                reraise=True,
            ):
                with attempt:
                    response = await client.post(self.url, json=payload, headers=self._headers())
                    status = response.status_code
                    if mode and structured.refused_field(mode, status, response.text):
                        raise _Refused(mode, status, response.text)
                    if status in _TRANSIENT_STATUS:
                        wait = (
                            retry_after_seconds(response.headers.get("retry-after"))
                            if status in _RETRY_AFTER_STATUS
                            else None
                        )
                        raise _Transient(f"HTTP {status}: {response.text[:200]}", wait)
        except (_Transient, httpx.HTTPError) as exc:
            raise ModelError(
                f"{self.url} failed after {self.max_attempts} attempt(s): {exc}"
            ) from exc
        if response.status_code >= 400:
            raise ModelError(
                f"{self.url} answered HTTP {response.status_code}: {response.text[:500]}"
            )
        return response

    async def structured_mode(self) -> dict[str, Any]:
        """The structured-output mode for this server and model, negotiating it if needed.

        A dict: `mode`, `source` (spec, env, cached, probe, fallback) and, after a probe,
        `probes` (what each mode tried answered).
        """
        if self._mode is not None:
            return self._mode
        async with (await self._loop_state()).lock:
            if self._mode is not None:
                return self._mode
            forced, origin = structured.forced_mode(self.structured)
            key = structured.cache_key(self.base_url, self.model)
            if forced is not None:
                return self._negotiated({"mode": forced, "source": origin})
            if (cached := structured.load_cached(key)) is not None:
                return self._negotiated({**cached, "source": "cached"})
            if self.transport is None:
                ensure_real_models_allowed(self.name)
            probed = self._negotiated(await self._probe())
            structured.store_cached(key, {**probed, "at": round(time.time())})
            return probed

    async def _probe(self) -> dict[str, Any]:
        probes: list[dict[str, Any]] = []
        request = structured.PROBE_REQUEST
        for mode in structured.candidates():
            if mode == "none":
                break
            payload = structured.shape(self._payload(request), request, mode)
            try:
                response = await self._post(payload, mode)
            except _Refused as exc:
                probes.append({"mode": mode, "result": "refused", "status": exc.status})
                continue
            completion = self._parse(response, 0.0, {})
            ok = structured.honoured(completion.text)
            probes.append(
                {
                    "mode": mode,
                    "result": "honoured" if ok else "ignored",
                    "tokens": completion.usage.total_tokens,
                }
            )
            if ok:
                return {"mode": mode, "source": "probe", "probes": probes}
        return {"mode": "none", "source": "probe", "probes": probes}

    async def complete(self, request: ModelRequest) -> Completion:
        if self.transport is None:
            ensure_real_models_allowed(self.name)
        started = time.perf_counter()
        details: dict[str, Any] = {}
        if request.json_schema is None:
            response = await self._post(self._payload(request), None)
        else:
            response = await self._post_structured(request, details)
        return self._parse(response, time.perf_counter() - started, details)

    async def _post_structured(
        self, request: ModelRequest, details: dict[str, Any]
    ) -> httpx.Response:
        negotiated = await self.structured_mode()
        mode = str(negotiated["mode"])
        details["structured"] = mode
        try:
            return await self._post(structured.shape(self._payload(request), request, mode), mode)
        except _Refused as exc:
            if negotiated["source"] in ("spec", "env"):
                raise ModelError(
                    f"{self.url} refused the forced structured-output mode {mode} "
                    f"(HTTP {exc.status}: {exc.body[:300]})"
                ) from exc
            refused = exc
        # Terminal for this mode: fall back once, remember it, and never retry the mode.
        fallback = structured.candidates(after=mode)[0]
        adopted = self._negotiated({"mode": fallback, "source": "fallback", "refused": mode})
        structured.store_cached(
            structured.cache_key(self.base_url, self.model), {**adopted, "at": round(time.time())}
        )
        details["structured"] = fallback
        details["structured_fallback"] = {
            "from": mode,
            "to": fallback,
            "status": refused.status,
            "error": refused.body[:300],
        }
        try:
            payload = structured.shape(self._payload(request), request, fallback)
            return await self._post(payload, fallback)
        except _Refused as exc:
            raise ModelError(
                f"{self.url} refused structured-output mode {mode} and then {fallback}: "
                f"HTTP {exc.status}: {exc.body[:300]}"
            ) from exc

    def _parse(
        self, response: httpx.Response, latency: float, details: dict[str, Any]
    ) -> Completion:
        try:
            body = response.json()
            choice = body["choices"][0]
            text = choice["message"].get("content") or ""
            raw_usage = body.get("usage") or {}
            timings = body.get("timings")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ModelError(f"malformed chat completion: {response.text[:300]}") from exc
        prompt = int(raw_usage.get("prompt_tokens") or 0)
        completion = int(raw_usage.get("completion_tokens") or 0)
        cached = int((raw_usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
        if isinstance(timings, dict):
            # llama.cpp's llama-server: prompt_n evaluated, cache_n reused, times in ms.
            details["server_timings"] = {
                k: timings[k] for k in sorted(timings) if isinstance(timings[k], int | float)
            }
            cached = cached or int(timings.get("cache_n") or 0)
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
            details=details,
        )
