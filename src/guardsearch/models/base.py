"""The one Model protocol every backend implements, and the base of models that wrap one."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from guardsearch.core.errors import ConfigError
from guardsearch.core.messages import Completion, ModelRequest


@runtime_checkable
class Model(Protocol):
    """An async chat model. `name` identifies it in traces and scorecards."""

    @property
    def name(self) -> str: ...

    async def complete(self, request: ModelRequest) -> Completion:
        """Answer one request."""
        ...


@runtime_checkable
class TokenCounter(Protocol):
    """Optional: backends that can count prompt tokens exactly implement this."""

    def count_tokens(self, request: ModelRequest) -> int: ...


# What a chat template may add around each message (role header, start/end markers,
# separators: ChatML, Llama 3 and Gemma add about 5 tokens; llama-2 style fewer than 8
# on average once the reply primer is counted) ...
_PER_MESSAGE_OVERHEAD = 8
# ... and once per request: BOS, the assistant reply primer, and the short default
# system preamble some templates insert (Qwen2.5's identity line, Llama 3.1's dates).
_PER_REQUEST_OVERHEAD = 32


def bound_prompt_tokens(request: ModelRequest) -> int:
    """An upper bound of the prompt tokens of `request` under any BPE tokenizer.

    Every token of a byte-level (or byte-fallback) BPE covers at least one byte of
    text, so a message has at most as many content tokens as UTF-8 bytes; the chat
    template's own tokens are bounded by a per-message and a per-request overhead.
    Deliberately pessimistic (English text is ~4 bytes per token): a reservation that
    is too high is refunded at reconcile, one that is too low overruns the limit.
    """
    content = sum(len(m.content.encode("utf-8", "surrogatepass")) for m in request.messages)
    return content + _PER_MESSAGE_OVERHEAD * len(request.messages) + _PER_REQUEST_OVERHEAD


def estimate_prompt_tokens(model: Model, request: ModelRequest) -> int:
    """An upper bound of the prompt tokens of `request`, for budget reservations.

    Exact when the backend counts tokens (`TokenCounter`); otherwise
    `bound_prompt_tokens`: UTF-8 bytes plus template overhead.
    """
    if isinstance(model, TokenCounter):
        return model.count_tokens(request)
    return bound_prompt_tokens(request)


def enforces_schema(model: Model) -> bool:
    """Does `model` decode under a request's `json_schema` (llama.cpp's grammar, a server
    honouring `response_format`), so an output cannot break it? A backend says so with
    `constrained_decoding = True`; wrappers pass it through."""
    return bool(getattr(model, "constrained_decoding", False))


@dataclass(frozen=True)
class Route:
    """Which of a model ladder's models answers a request, and why (`models/ladder.py`).

    `index` is the model's rung (0 = the first), `start` the rung the request's role
    starts at; `reason` says what escalated it (empty when `index == start`).
    """

    model: Model
    index: int
    start: int = 0
    reason: str = ""

    @property
    def escalated(self) -> bool:
        return self.index > self.start


def route_of(model: Model, request: ModelRequest) -> Route | None:
    """The route a model ladder (possibly wrapped) takes for `request`; None for one model."""
    route = getattr(model, "route", None)
    return route(request) if callable(route) else None


def request_digest(model: Model, request: ModelRequest) -> str:
    """The key a cache in front of `model` keeps the answer under.

    The request's digest, unless `model` is a ladder that sends the request to a model
    other than its first (then the model's name is part of the key: a stronger model's
    answer is not the first model's).
    """
    keyed = getattr(model, "request_digest", None)
    return str(keyed(request)) if callable(keyed) else request.digest()


@dataclass
class WrapperModel:
    """A model that adds behaviour around `inner` (budgets: `Metered`; caches: `CachedModel`).

    It passes through what describes the inner model: its name, its prices, whether it
    decodes under a JSON Schema (`constrained_decoding`), its route and cache key (a
    ladder's: `route_of`, `request_digest`) and its token counts (exact when the inner
    model counts tokens, else the byte bound, as
    `estimate_prompt_tokens` gives for the inner model itself). `complete` asks the
    inner model; subclasses override it to add their behaviour around that call.
    """

    inner: Model

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def price_prompt_per_mtok(self) -> float:
        return float(getattr(self.inner, "price_prompt_per_mtok", 0.0) or 0.0)

    @property
    def price_completion_per_mtok(self) -> float:
        return float(getattr(self.inner, "price_completion_per_mtok", 0.0) or 0.0)

    @property
    def constrained_decoding(self) -> bool:
        return enforces_schema(self.inner)

    def count_tokens(self, request: ModelRequest) -> int:
        return estimate_prompt_tokens(self.inner, request)

    def route(self, request: ModelRequest) -> Route | None:
        return route_of(self.inner, request)

    def request_digest(self, request: ModelRequest) -> str:
        return request_digest(self.inner, request)

    async def complete(self, request: ModelRequest) -> Completion:
        return await self.inner.complete(request)


def provider_of(model: Model) -> str:
    """Which backend answers for `model` (through its wrappers): its `provider` if it
    names one, else the module its class lives in (`llamacpp`, `openai`, `scripted`,
    `replay`, ...); the traces and the OpenTelemetry spans say it."""
    while isinstance(model, WrapperModel):
        model = model.inner
    named = getattr(model, "provider", None)
    if isinstance(named, str) and named:
        return named
    return type(model).__module__.rsplit(".", 1)[-1]


# Tests flip this off so that no unit test can reach a real model by accident
# (pydantic-ai's ALLOW_MODEL_REQUESTS). Real backends call `ensure_real_models_allowed()`.
_ALLOW_REAL = os.environ.get("GUARDSEARCH_ALLOW_REAL_MODELS", "1") != "0"


def allow_real_models(allowed: bool) -> None:
    global _ALLOW_REAL
    _ALLOW_REAL = allowed


def ensure_real_models_allowed(name: str) -> None:
    if not _ALLOW_REAL:
        raise ConfigError(
            f"real model {name!r} requested while real models are disabled "
            "(GUARDSEARCH_ALLOW_REAL_MODELS=0 or allow_real_models(False)); "
            "use ScriptedModel/ReplayModel, or mark the test with @pytest.mark.model"
        )


async def aclose_model(model: object) -> None:
    """Close what a model holds open (an OpenAIModel's connection pool), through wrappers.

    Callers that build a model from a spec own it and close it when done; models that
    hold nothing open have no `aclose` and are left alone.
    """
    while isinstance(model, WrapperModel):
        model = model.inner
    close = getattr(model, "aclose", None)
    if close is not None:
        await close()


def size_model_pool(model: object, concurrency: int) -> None:
    """Let a model that pools connections (OpenAIModel) open `concurrency` at once."""
    while isinstance(model, WrapperModel):
        model = model.inner
    size = getattr(model, "size_pool", None)
    if size is not None:
        size(concurrency)
