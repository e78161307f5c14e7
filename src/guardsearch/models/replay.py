"""Replay logs: answers recorded by request digest in a JSONL file, replayed exactly.

The log holds one `{"digest", "request", "completion"}` per answered request, appended
and flushed as each answer arrives, so a killed process loses nothing it paid for.
Recording is a `CachedModel` over a `FileCache` (known requests are replayed, not paid
again); `ReplayModel` answers from the log alone, so any run can be reproduced
without the original model.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from guardsearch.core.errors import ConfigError, ReplayMiss
from guardsearch.core.messages import Completion, ModelRequest
from guardsearch.jsonl import cut_torn_tail, json_line, jsonl_lines
from guardsearch.models.cache import CachedModel, DictCache


def load_log(path: Path) -> dict[str, Completion]:
    """Read a replay log; a torn last line (killed writer) is ignored, nothing else is."""
    answers: dict[str, Completion] = {}
    if not path.exists():
        return answers
    lines = jsonl_lines(path)
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            answers[record["digest"]] = Completion.from_dict(record["completion"])
        except (ValueError, KeyError, TypeError) as exc:
            if number == len(lines):
                break  # the writer was killed mid-line; that answer was never returned
            raise ConfigError(f"{path}:{number}: corrupt replay record: {exc}") from exc
    return answers


@dataclass
class FileCache(DictCache):
    """A cache in a replay log: loaded when made, appended to (fsynced) on put."""

    path: Path
    _tail_checked: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        self.answers = load_log(self.path)

    def put(self, digest: str, request: ModelRequest, completion: Completion) -> None:
        record = {
            "digest": digest,
            "request": request.as_dict(),
            "completion": completion.as_dict(),
        }
        if not self._tail_checked:
            cut_torn_tail(self.path)  # new records must not be glued onto a torn one
            self._tail_checked = True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json_line(record))
            fh.flush()
            os.fsync(fh.fileno())
        super().put(digest, request, completion)


@dataclass
class _Unrecorded:
    """The model behind a bare replay: a request that reaches it was never recorded."""

    path: Path

    @property
    def name(self) -> str:
        return f"replay:{self.path.name}"

    async def complete(self, request: ModelRequest) -> Completion:
        raise ReplayMiss(request.digest(), str(self.path))


class ReplayModel(CachedModel):
    """Answers from the replay log at `path` only; an unrecorded request raises `ReplayMiss`."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if not path.exists():
            raise ConfigError(f"replay log {path} does not exist")
        super().__init__(_Unrecorded(path), FileCache(path))
