"""RunStoreCache: inside one run, a request already answered is never paid for again.

A durable run asks its model through `CachedModel(model, RunStoreCache(store, run_id))`.
Each answer is committed to the run store (by request digest) as soon as it arrives,
so a resumed run replays what the killed process paid for. The one unavoidable gap
is the instant between the provider answering and that commit: a kill exactly there
loses the answer, and the resumed run asks again. (Identical requests in flight at
once are paid once: `CachedModel` does that for every cache.)

A store that cannot take the answer (locked past the store's wait, disk full,
read-only, unreachable) does not lose it: the answer stays in memory, so the run goes
on with it, and is appended to a small *kept answers* file in `GUARDSEARCH_HOME/kept`
(one per store and run), so it survives the process. Every later write, and the
run's next checkpoint (`flush`), first puts kept answers into the store; a cache made
for the run later (a resume) reads the file and does the same, then deletes it.
"""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guardsearch.core.errors import StoreError
from guardsearch.core.messages import Completion, ModelRequest
from guardsearch.jsonl import cut_torn_tail, json_line
from guardsearch.models.cache import DictCache
from guardsearch.paths import home
from guardsearch.store.base import RunStore


def kept_file(store: RunStore, run_id: str) -> Path:
    """Where answers the store could not take wait for it (named by a hash: no run id
    or URL becomes a path)."""
    key = hashlib.sha256(f"{store.url}\0{run_id}".encode()).hexdigest()[:24]
    return home() / "kept" / f"{key}.jsonl"


@dataclass
class RunStoreCache(DictCache):
    """A cache in the run store's `calls` of run `run_id`: loaded when made, each new
    answer committed on put (or kept until the store takes it).

    `pending` holds the answers not yet in the store, by digest.
    """

    store: RunStore
    run_id: str
    pending: dict[str, tuple[dict[str, Any], dict[str, Any]]] = field(
        default_factory=dict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        self.answers = {
            c["digest"]: Completion.from_dict(c["completion"])
            for c in self.store.calls(self.run_id)
        }
        for digest, request, completion in self._read_kept():
            if digest not in self.answers:
                self.answers[digest] = Completion.from_dict(completion)
                self.pending[digest] = (request, completion)
        if self.pending or kept_file(self.store, self.run_id).exists():
            self.flush()

    def put(self, digest: str, request: ModelRequest, completion: Completion) -> None:
        # Memory first: whatever the store does, this run goes on with the answer.
        super().put(digest, request, completion)
        self.pending[digest] = (request.as_dict(), completion.as_dict())
        try:
            self.flush()
        except StoreError:
            self._keep(digest)

    def flush(self) -> None:
        """Write every answer the store has not taken yet; a StoreError if it still cannot."""
        for digest, (request, completion) in list(self.pending.items()):
            self.store.remember(self.run_id, digest, request, completion)
            del self.pending[digest]
        with suppress(OSError):
            kept_file(self.store, self.run_id).unlink(missing_ok=True)

    def kept_note(self) -> str:
        """For an error message: where the answers the store has not taken are."""
        if not self.pending:
            return "every paid answer is in the store"
        where = kept_file(self.store, self.run_id)
        if where.exists():
            return f"{len(self.pending)} paid answer(s) kept in {where} meanwhile"
        return f"{len(self.pending)} paid answer(s) could not be kept anywhere"

    def _keep(self, digest: str) -> None:
        request, completion = self.pending[digest]
        line = json_line({"digest": digest, "request": request, "completion": completion})
        path = kept_file(self.store, self.run_id)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            cut_torn_tail(path)  # a line torn by a killed writer must not glue onto this one
            with path.open("a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError:
            pass  # that disk is full too (or no home): the answer lives in memory only

    def _read_kept(self) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        path = kept_file(self.store, self.run_id)
        try:
            text = path.read_text("utf-8", errors="replace")
        except OSError:
            return []
        found = []
        for line in text.splitlines():
            try:
                entry = json.loads(line)
                found.append((entry["digest"], entry["request"], entry["completion"]))
            except (ValueError, KeyError, TypeError):
                continue  # a torn last line (a killed writer)
        return found
