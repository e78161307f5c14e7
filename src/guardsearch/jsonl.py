"""JSON Lines files, the format of every append-only log here: event traces (`JsonlSink`),
replay logs (`models.replay`) and experiment results.

Writers append whole lines, each ending in a newline; readers ignore a torn last line
(a killed writer) and nothing else.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from guardsearch.core.events import Event


class JsonlSink:
    """A Trace subscriber writing one JSON object per event, flushed per line."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        cut_torn_tail(self.path)
        self._fh: IO[str] = self.path.open("a", encoding="utf-8")

    def __call__(self, event: Event) -> None:
        self._fh.write(json_line(event.as_dict()))
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


def json_line(value: Any) -> str:
    """One JSON Lines record: readable UTF-8, with escapes only where UTF-8 cannot go.

    A model can return an unpaired surrogate (half an emoji); written raw it cannot be
    encoded, so such a record falls back to ASCII escapes instead of failing the run.
    """
    line = json.dumps(value, ensure_ascii=False, default=str)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(value, default=str)
    return line + "\n"


def cut_torn_tail(path: Path) -> None:
    """Cut a partial last line left by a killed writer, so appended lines start clean.

    Writers here append whole lines, each ending in a newline; anything after the last
    newline is an interrupted write that readers ignore. Appending after it would glue
    the next record onto it and corrupt the file for good.
    """
    try:
        with path.open("rb+") as fh:
            if fh.seek(0, os.SEEK_END) == 0:
                return
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) == b"\n":
                return
            fh.seek(0)
            fh.truncate(fh.read().rfind(b"\n") + 1)
    except FileNotFoundError:
        return


def jsonl_lines(path: Path) -> list[bytes]:
    """The lines of a JSON Lines file, split at newlines only, as bytes.

    Not `str.splitlines()`: it also splits at U+2028, U+2029 and U+0085, which
    `json.dumps(ensure_ascii=False)` leaves unescaped inside strings. Bytes, so that a
    torn last line cut inside a UTF-8 character fails to decode on its own.
    """
    lines = path.read_bytes().split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def read_events(path: str | Path) -> list[dict[str, object]]:
    """Read a JSONL trace back (a torn last line from a killed writer is skipped)."""
    out: list[dict[str, object]] = []
    lines = jsonl_lines(Path(path))
    for i, line in enumerate(lines):
        try:
            out.append(json.loads(line))
        except ValueError:
            if i != len(lines) - 1:
                raise
    return out
