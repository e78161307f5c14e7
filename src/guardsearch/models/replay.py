"""ReplayModel: record request/response pairs by digest, replay them exactly.

The log is JSON Lines, one `{"digest", "request", "completion"}` per answered request,
appended and flushed as each answer arrives, so a killed process loses nothing it paid
for. Replaying makes any run reproducible without the original model.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guardsearch.core.errors import ConfigError, ReplayMiss
from guardsearch.core.messages import Completion, ModelRequest
from guardsearch.core.usage import Usage
from guardsearch.models.base import Model, bound_prompt_tokens, estimate_prompt_tokens
from guardsearch.store.jsonl import cut_torn_tail, json_line, jsonl_lines


def _completion_to_dict(c: Completion) -> dict[str, Any]:
    return {
        "text": c.text,
        "usage": {
            "calls": c.usage.calls,
            "prompt_tokens": c.usage.prompt_tokens,
            "completion_tokens": c.usage.completion_tokens,
            "cached_prompt_tokens": c.usage.cached_prompt_tokens,
            "cost": c.usage.cost,
        },
        "latency_s": c.latency_s,
        "model": c.model,
        "finish_reason": c.finish_reason,
    }


def _completion_from_dict(d: dict[str, Any]) -> Completion:
    return Completion(
        text=d["text"],
        usage=Usage(**d.get("usage", {})),
        latency_s=float(d.get("latency_s", 0.0)),
        model=d.get("model", ""),
        finish_reason=d.get("finish_reason", "stop"),
    )


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
            answers[record["digest"]] = _completion_from_dict(record["completion"])
        except (ValueError, KeyError, TypeError) as exc:
            if number == len(lines):
                break  # the writer was killed mid-line; that answer was never returned
            raise ConfigError(f"{path}:{number}: corrupt replay record: {exc}") from exc
    return answers


@dataclass
class ReplayModel:
    """Replays recorded answers; with `inner`, records new ones (and replays known ones)."""

    path: Path
    inner: Model | None = None
    name: str = ""
    hits: int = 0
    misses: int = 0
    answered: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        self._answers = load_log(self.path)
        if self.inner is not None:
            cut_torn_tail(self.path)  # new records must not be glued onto a torn one
        if self.inner is None and not self._answers and not self.path.exists():
            raise ConfigError(f"replay log {self.path} does not exist")
        if not self.name:
            self.name = self.inner.name if self.inner is not None else f"replay:{self.path.name}"

    def __len__(self) -> int:
        return len(self._answers)

    def count_tokens(self, request: ModelRequest) -> int:
        """The inner model's count when it has one, else the byte bound.

        A recorded answer carries the usage the recording model reported, so the inner
        model (the one that would be asked on a miss) is the right one to count with.
        """
        if self.inner is None:
            return bound_prompt_tokens(request)
        return estimate_prompt_tokens(self.inner, request)

    async def complete(self, request: ModelRequest) -> Completion:
        digest = request.digest()
        known = self._answers.get(digest)
        if known is not None:
            self.hits += 1
            return known
        if self.inner is None:
            raise ReplayMiss(digest, str(self.path))
        self.misses += 1
        completion = await self.inner.complete(request)
        self._record(digest, request, completion)
        return completion

    def _record(self, digest: str, request: ModelRequest, completion: Completion) -> None:
        self._answers[digest] = completion
        self.answered[digest] = self.answered.get(digest, 0) + 1
        record = {
            "digest": digest,
            "request": {
                "messages": [[m.role, m.content] for m in request.messages],
                "temperature": request.temperature,
                "seed": request.seed,
                "max_tokens": request.max_tokens,
            },
            "completion": _completion_to_dict(completion),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json_line(record))
            fh.flush()
            os.fsync(fh.fileno())
