"""MemoModel: inside one run, a request already answered is never paid for again.

Each answer is committed to the run store (by request digest) as soon as it arrives,
so a resumed run replays what the killed process paid for. The one unavoidable gap
is the instant between the provider answering and that commit: a kill exactly there
loses the answer, and the resumed run asks again.

Within one process, two identical requests in flight at once (a concurrent search)
are paid once: the second waits for the first's answer. A request whose call failed
is not remembered; a caller that was waiting for it asks on its own.
"""

from __future__ import annotations

import asyncio
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
    # Requests being paid for right now, by digest; done when the call has ended.
    _inflight: dict[str, asyncio.Future[None]] = field(default_factory=dict, repr=False)

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
        while True:
            known = self._known.get(digest)
            if known is not None:
                self.replayed += 1
                return _completion_from_dict(known)
            pending = self._inflight.get(digest)
            if pending is None:
                break
            # The same request is being paid for: wait for its answer (without
            # cancelling it if this caller is cancelled), then look again.
            await asyncio.wait({pending})
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._inflight[digest] = future
        try:
            completion = await self.inner.complete(request)
            data = _completion_to_dict(completion)
            self.store.remember(self.run_id, digest, request_to_dict(request), data)
            self._known[digest] = data
            self.paid += 1
            return completion
        finally:
            del self._inflight[digest]
            future.set_result(None)  # waiters replay the answer, or ask on their own
