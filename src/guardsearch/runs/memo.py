"""MemoModel: inside one run, a request already answered is never paid for again.

Each answer is committed to the run store (by request digest) as soon as it arrives,
so a resumed run replays what the killed process paid for. The one unavoidable gap
is the instant between the provider answering and that commit: a kill exactly there
loses the answer, and the resumed run asks again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from guardsearch.core.messages import Completion, ModelRequest
from guardsearch.models.base import Model, estimate_prompt_tokens
from guardsearch.models.replay import _completion_from_dict, _completion_to_dict
from guardsearch.store.base import RunStore


def request_to_dict(request: ModelRequest) -> dict[str, Any]:
    return {
        "messages": [[m.role, m.content] for m in request.messages],
        "temperature": request.temperature,
        "seed": request.seed,
        "max_tokens": request.max_tokens,
    }


@dataclass
class MemoModel:
    """Wraps a model: answers known to the run come from the store, new ones are stored."""

    inner: Model
    store: RunStore
    run_id: str
    paid: int = 0
    replayed: int = 0
    _known: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._known = {c["digest"]: c["completion"] for c in self.store.calls(self.run_id)}

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def price_prompt_per_mtok(self) -> float:
        return float(getattr(self.inner, "price_prompt_per_mtok", 0.0) or 0.0)

    @property
    def price_completion_per_mtok(self) -> float:
        return float(getattr(self.inner, "price_completion_per_mtok", 0.0) or 0.0)

    def count_tokens(self, request: ModelRequest) -> int:
        return estimate_prompt_tokens(self.inner, request)

    async def complete(self, request: ModelRequest) -> Completion:
        digest = request.digest()
        known = self._known.get(digest)
        if known is not None:
            self.replayed += 1
            return _completion_from_dict(known)
        completion = await self.inner.complete(request)
        data = _completion_to_dict(completion)
        self.store.remember(self.run_id, digest, request_to_dict(request), data)
        self._known[digest] = data
        self.paid += 1
        return completion
