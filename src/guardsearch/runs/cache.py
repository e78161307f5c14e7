"""RunStoreCache: inside one run, a request already answered is never paid for again.

A durable run asks its model through `CachedModel(model, RunStoreCache(store, run_id))`.
Each answer is committed to the run store (by request digest) as soon as it arrives,
so a resumed run replays what the killed process paid for. The one unavoidable gap
is the instant between the provider answering and that commit: a kill exactly there
loses the answer, and the resumed run asks again. (Identical requests in flight at
once are paid once: `CachedModel` does that for every cache.)
"""

from __future__ import annotations

from dataclasses import dataclass

from guardsearch.core.messages import Completion, ModelRequest
from guardsearch.models.cache import DictCache
from guardsearch.store.base import RunStore


@dataclass
class RunStoreCache(DictCache):
    """A cache in the run store's `calls` of run `run_id`: loaded when made, each new
    answer committed on put."""

    store: RunStore
    run_id: str

    def __post_init__(self) -> None:
        self.answers = {
            c["digest"]: Completion.from_dict(c["completion"])
            for c in self.store.calls(self.run_id)
        }

    def put(self, digest: str, request: ModelRequest, completion: Completion) -> None:
        # One autocommitted insert: durable before the caller sees the answer.
        self.store.remember(self.run_id, digest, request.as_dict(), completion.as_dict())
        super().put(digest, request, completion)
