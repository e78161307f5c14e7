"""Where trial results and traces go: a small seam, JSON Lines files by default.

`ResultStore` is what the runner needs: which trials are finished, save one, load all.
`JsonlResults` keeps `trials.jsonl` (one result per line, appended and flushed as each
trial ends) and `traces/<n>.jsonl` (that trial's events) under the experiment's out
directory. A durable run store can implement the same three methods and be plugged in.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from guardsearch.experiments.trial import TrialResult
from guardsearch.store.jsonl import cut_torn_tail, json_line, jsonl_lines


class ResultStore(Protocol):
    def finished(self) -> set[str]:
        """Keys of the trials already stored (the runner skips them)."""
        ...

    def save(self, result: TrialResult, events: Sequence[dict[str, Any]]) -> None: ...

    def load(self) -> list[TrialResult]: ...


class JsonlResults:
    """Trial results in `DIR/trials.jsonl`, each trial's trace in `DIR/traces/`."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.path = self.root / "trials.jsonl"
        self.traces = self.root / "traces"

    def trace_path(self, key: str) -> Path:
        name = hashlib.sha256(key.encode()).hexdigest()[:16]
        return self.traces / f"{name}.jsonl"

    def finished(self) -> set[str]:
        return {r.key for r in self.load()}

    def save(self, result: TrialResult, events: Sequence[dict[str, Any]]) -> None:
        # The trace first: a result line means its trace is complete.
        self.traces.mkdir(parents=True, exist_ok=True)
        self.trace_path(result.key).write_text(
            "".join(json_line(e) for e in events), encoding="utf-8"
        )
        cut_torn_tail(self.path)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json_line(result.as_dict()))
            fh.flush()

    def load(self) -> list[TrialResult]:
        if not self.path.exists():
            return []
        results: dict[str, TrialResult] = {}
        lines = jsonl_lines(self.path)
        for i, line in enumerate(lines):
            try:
                record = TrialResult.from_dict(json.loads(line))
            except (ValueError, TypeError):
                if i == len(lines) - 1:
                    break  # a torn last line: that trial was not finished
                raise
            results[record.key] = record
        return list(results.values())

    def events(self, key: str) -> list[dict[str, Any]]:
        path = self.trace_path(key)
        return [json.loads(line) for line in jsonl_lines(path)] if path.exists() else []
