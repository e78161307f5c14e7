"""CachedModel: a request already answered is answered from a cache, not paid for again.

The cache is keyed by the request's digest (`ModelRequest.digest()`: everything that
determines the answer; in front of a model ladder, also the model it goes to), so
only an identical request hits. A hit comes back with the
usage the model reported when it was paid for, so budgets, call counts and token
figures are what they would have been without the cache; only wall time differs.

Where the answers live is the cache's business: `DictCache` (memory, one process),
`FileCache` (a JSONL replay log; `models.replay`), `RunStoreCache` (a durable run's
store; `runs.cache`). A replay is a cache in front of no model (`ReplayModel`).

Two identical requests in flight at once (a concurrent search) are paid once: the
second waits for the first's answer. A call that fails is not cached; a caller that
was waiting for it asks on its own.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Protocol

from guardsearch.core.messages import Completion, ModelRequest
from guardsearch.models.base import WrapperModel, request_digest


class CompletionCache(Protocol):
    """Where a `CachedModel` keeps its answers, by request digest."""

    def get(self, digest: str) -> Completion | None:
        """The answer stored under `digest`, or None."""
        ...

    def put(self, digest: str, request: ModelRequest, completion: Completion) -> None:
        """Store the answer to `request` (whose digest is `digest`)."""
        ...

    def __len__(self) -> int: ...


@dataclass
class DictCache:
    """Answers in a dict, for as long as the process (or the owner) keeps it.

    The durable caches are dict caches that load their answers when made and write
    each new one through before keeping it.
    """

    answers: dict[str, Completion] = field(default_factory=dict, kw_only=True, repr=False)

    def get(self, digest: str) -> Completion | None:
        return self.answers.get(digest)

    def put(self, digest: str, request: ModelRequest, completion: Completion) -> None:
        self.answers[digest] = completion

    def __len__(self) -> int:
        return len(self.answers)


@dataclass
class CachedModel(WrapperModel):
    """Answers from `cache` when it knows the request, else from `inner` (then cached).

    `hits` counts answers served from the cache, `misses` answers paid for by `inner`.
    """

    cache: CompletionCache = field(default_factory=DictCache)
    hits: int = 0
    misses: int = 0
    # Requests being paid for right now, by digest; done when the call has ended.
    _inflight: dict[str, asyncio.Future[None]] = field(default_factory=dict, repr=False)

    async def complete(self, request: ModelRequest) -> Completion:
        digest = request_digest(self.inner, request)
        while True:
            known = self.cache.get(digest)
            if known is not None:
                self.hits += 1
                return known
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
            self.cache.put(digest, request, completion)
            self.misses += 1
            return completion
        finally:
            del self._inflight[digest]
            future.set_result(None)  # waiters take the cached answer, or ask on their own
