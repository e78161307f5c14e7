"""A run's trial traces in one compressed file: `traces.jsonl.gz`.

Each finished trial appends one gzip member holding one JSON line,
`{"key": ..., "fingerprint": ..., "events": [...]}`. gzip readers treat concatenated
members as one stream, so `zcat traces.jsonl.gz | jq` reads the whole run, one trial a
line. Appending a member never rewrites what is there; a writer killed mid-member
leaves a torn last member, which readers skip and the next append cuts off first. So a
killed bench loses at most the trace it was writing, and the result line of that trial
(written after its trace) is missing too, so resuming runs it again.

`pack_loose_traces` moves the older layout (one `traces/<hash>.jsonl` file per trial)
into the archive.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from guardsearch.core.errors import ConfigError
from guardsearch.jsonl import json_line, jsonl_lines

ARCHIVE_NAME = "traces.jsonl.gz"
LOOSE_DIR = "traces"
_CHUNK = 1 << 16  # fed to the decompressor piecewise, so finding a member's end copies little

TraceKey = tuple[str, str | None]


class TraceArchiveError(ConfigError):
    """The archive is damaged before its last member (not a torn write)."""


def _member_at(view: memoryview, offset: int) -> tuple[bytes | None, int]:
    """The content of the gzip member starting at `offset` and where it ends; None for
    a member cut short (a torn last write)."""
    inflate = zlib.decompressobj(wbits=31)  # 31: gzip header and trailer
    parts: list[bytes] = []
    pos = offset
    try:
        while not inflate.eof and pos < len(view):
            parts.append(inflate.decompress(view[pos : pos + _CHUNK]))
            pos = min(pos + _CHUNK, len(view))
    except zlib.error as exc:
        raise TraceArchiveError(f"damaged trace archive at byte {offset}: {exc}") from exc
    if not inflate.eof:
        return None, len(view)
    return b"".join(parts), pos - len(inflate.unused_data)


def _records(content: bytes) -> Iterator[dict[str, Any]]:
    for line in content.split(b"\n"):
        if line.strip():
            yield json.loads(line)


class TraceArchive:
    """Trial traces of one run in one gzip file, appended one member per trial."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._index: dict[TraceKey, int] = {}
        self._indexed_to = 0  # end of the last complete member indexed
        self._clean_size: int | None = None  # file size known to end on a whole member

    def _size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def members(self, start: int = 0) -> Iterator[tuple[int, int, bytes | None]]:
        """(start, end, content) of each member from byte `start`; the content of a
        torn last member is None."""
        if not self.path.exists():
            return
        with self.path.open("rb") as fh:
            fh.seek(start)
            view = memoryview(fh.read())
        offset = 0
        while offset < len(view):
            content, end = _member_at(view, offset)
            yield start + offset, start + end, content
            offset = end

    def records(self) -> Iterator[dict[str, Any]]:
        """Every complete record, in the order written (a re-run trial appears twice;
        the later one counts)."""
        for _, _, content in self.members():
            if content is not None:
                yield from _records(content)

    def append(self, key: str, fingerprint: str | None, events: Sequence[dict[str, Any]]) -> None:
        """Add one trial's trace as one gzip member, after cutting a torn tail."""
        self.write({"key": key, "fingerprint": fingerprint, "events": list(events)})

    def write(self, record: dict[str, Any]) -> None:
        """Append one record (with `key`, `fingerprint` and `events`) as one member."""
        member = gzip.compress(json_line(record).encode("utf-8"), compresslevel=9, mtime=0)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self._clean_size is None or self._clean_size != self._size():
            self._cut_torn_tail()
        with self.path.open("ab") as fh:
            fh.write(member)
            fh.flush()
        self._clean_size = self._size()

    def _cut_torn_tail(self) -> None:
        # Appending after a torn member would bury it mid-file, where it reads as damage.
        end = 0
        for _, member_end, content in self.members():
            if content is None:
                break
            end = member_end
        if end < self._size():
            with self.path.open("rb+") as fh:
                fh.truncate(end)
        if self._indexed_to > end:
            self._index, self._indexed_to = {}, 0

    def _refresh(self) -> None:
        """Index the members appended since the last look (by key and fingerprint)."""
        if self._size() < self._indexed_to:  # cut or replaced: start over
            self._index, self._indexed_to = {}, 0
        for start, end, content in self.members(self._indexed_to):
            if content is None:
                break
            for record in _records(content):
                if record["key"] is not None:  # an unnamed packed file has none
                    self._index[(record["key"], record.get("fingerprint"))] = start
            self._indexed_to = end

    def keys(self) -> set[TraceKey]:
        """(key, fingerprint) of every stored trace."""
        self._refresh()
        return set(self._index)

    def events(self, key: str, fingerprint: str | None) -> list[dict[str, Any]]:
        """The trace of one trial (the last stored under that key and fingerprint), or
        [] if none is stored."""
        self._refresh()
        start = self._index.get((key, fingerprint))
        if start is None:
            return []
        _, _, content = next(self.members(start))
        found: list[dict[str, Any]] = []
        for record in _records(content or b""):
            if (record["key"], record.get("fingerprint")) == (key, fingerprint):
                found = list(record["events"])
        return found


def loose_trace_name(key: str, fingerprint: str | None) -> str:
    """The file name a trial's trace had in the older `traces/` layout."""
    ident = key if fingerprint is None else f"{key}|{fingerprint}"
    return hashlib.sha256(ident.encode()).hexdigest()[:16] + ".jsonl"


def pack_loose_traces(root: str | Path, *, remove: bool = True) -> dict[str, int]:
    """Move `ROOT/traces/*.jsonl` into `ROOT/traces.jsonl.gz`, in the order of
    `ROOT/trials.jsonl`; a file no trial names is kept under key None with its file
    name. Every trace is read back from the archive and compared before the loose files
    are removed. Returns the counts."""
    root = Path(root)
    loose = root / LOOSE_DIR
    archive = TraceArchive(root / ARCHIVE_NAME)
    if not loose.is_dir():
        return {"packed": 0, "unnamed": 0}
    owners: dict[str, TraceKey] = {}
    trials = root / "trials.jsonl"
    for line in jsonl_lines(trials) if trials.exists() else []:
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a torn last line: no trace belongs to it
        ident = (record["key"], record.get("fingerprint"))
        owners.setdefault(loose_trace_name(*ident), ident)
    files = sorted(loose.glob("*.jsonl"))
    rank = {name: i for i, name in enumerate(owners)}
    ordered = sorted((f for f in files if f.name in owners), key=lambda f: rank[f.name])
    unnamed = [f for f in files if f.name not in owners]
    written: list[tuple[Path, TraceKey]] = []
    for f in ordered:
        ident = owners[f.name]
        archive.append(ident[0], ident[1], _loose_events(f))
        written.append((f, ident))
    for f in unnamed:
        archive.write(
            {"key": None, "fingerprint": None, "file": f.name, "events": _loose_events(f)}
        )
    _verify(archive, written, unnamed)
    if remove:
        for f in files:
            f.unlink()
        if not any(loose.iterdir()):
            loose.rmdir()
    return {"packed": len(written), "unnamed": len(unnamed)}


def _loose_events(path: Path) -> list[dict[str, Any]]:
    lines = jsonl_lines(path)
    events = []
    for i, line in enumerate(lines):
        try:
            events.append(json.loads(line))
        except ValueError:
            if i == len(lines) - 1:
                break  # torn by a killed writer, as the old reader skipped it
            raise
    return events


def _verify(
    archive: TraceArchive, written: list[tuple[Path, TraceKey]], unnamed: list[Path]
) -> None:
    fresh = TraceArchive(archive.path)
    for path, (key, fingerprint) in written:
        if fresh.events(key, fingerprint) != _loose_events(path):
            raise TraceArchiveError(f"{path} did not round-trip into {archive.path}")
    kept = {r.get("file"): r["events"] for r in fresh.records() if r["key"] is None}
    for path in unnamed:
        if kept.get(path.name) != _loose_events(path):
            raise TraceArchiveError(f"{path} did not round-trip into {archive.path}")
