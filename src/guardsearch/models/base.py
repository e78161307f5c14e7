"""The one Model protocol every backend implements."""

from __future__ import annotations

import os
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


_PER_MESSAGE_OVERHEAD = 8


def estimate_prompt_tokens(model: Model, request: ModelRequest) -> int:
    """An upper-bound-ish estimate of the prompt tokens of `request` for reservations.

    Exact when the backend counts tokens; otherwise chars/3 (real tokenizers average
    about 4 chars per token on English text) plus per-message overhead.
    """
    if isinstance(model, TokenCounter):
        return model.count_tokens(request)
    chars = sum(len(m.content) for m in request.messages)
    return chars // 3 + 1 + _PER_MESSAGE_OVERHEAD * len(request.messages)


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
