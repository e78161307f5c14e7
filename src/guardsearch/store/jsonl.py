"""JsonlSink: append a run's events to a JSON Lines file as they happen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO

from guardsearch.core.events import Event


class JsonlSink:
    """A Trace subscriber writing one JSON object per event, flushed per line."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] = self.path.open("a", encoding="utf-8")

    def __call__(self, event: Event) -> None:
        self._fh.write(json.dumps(event.as_dict(), ensure_ascii=False, default=str) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


def read_events(path: str | Path) -> list[dict[str, object]]:
    """Read a JSONL trace back (a torn last line from a killed writer is skipped)."""
    out: list[dict[str, object]] = []
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        try:
            out.append(json.loads(line))
        except ValueError:
            if i != len(lines) - 1:
                raise
    return out
