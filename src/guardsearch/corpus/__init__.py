"""Offline corpora: the embedded Wikipedia summaries and the user's own files, in SQLite FTS5."""

from __future__ import annotations

from pathlib import Path

from guardsearch import paths
from guardsearch.corpus import wikipedia
from guardsearch.corpus.documents import CorpusInfo, Document
from guardsearch.corpus.index import CorpusIndex
from guardsearch.corpus.ingest import documents_from, files_under, key_prefixes

INDEX_FILE = "index.sqlite3"


def default_index_path() -> Path:
    return paths.subdir("corpus") / INDEX_FILE


def ensure_wikipedia(index: CorpusIndex) -> int:
    """Index the embedded Wikipedia summaries once (no-op when already indexed or absent)."""
    source = wikipedia.data_path()
    if source is None:
        return 0
    return index.add(
        wikipedia.NAME,
        wikipedia.documents(source),
        source=wikipedia.SOURCE,
        license=wikipedia.LICENSE,
        attribution=wikipedia.ATTRIBUTION,
        marker=(f"corpus:{wikipedia.NAME}", wikipedia.fingerprint(source)),
    )


_OPEN: dict[Path, CorpusIndex] = {}


def open_index(path: str | Path | None = None, *, with_wikipedia: bool = True) -> CorpusIndex:
    """The index at `path` (default: the data directory), Wikipedia indexed on first use."""
    where = Path(path) if path is not None else default_index_path()
    index = _OPEN.get(where)
    if index is None:
        index = CorpusIndex(where)
        _OPEN[where] = index
    if with_wikipedia:
        ensure_wikipedia(index)
    return index


def add_files(index: CorpusIndex, path: str | Path, name: str) -> int:
    """Ingest .txt/.md/.html files at `path` into corpus `name`; returns passages added.

    Re-adding replaces: the old passages of every file under `path` (also of files no
    longer there) are deleted in the same transaction, so nothing stale stays. Other
    paths in the same corpus are untouched. With no supported file at `path` nothing
    changes and 0 is returned.
    """
    if not files_under(Path(path).expanduser().resolve()):
        return 0
    return index.add(
        name,
        documents_from(path, name),
        source=str(Path(path).expanduser()),
        replace=key_prefixes(path),
    )


__all__ = [
    "CorpusIndex",
    "CorpusInfo",
    "Document",
    "add_files",
    "default_index_path",
    "ensure_wikipedia",
    "open_index",
    "wikipedia",
]
