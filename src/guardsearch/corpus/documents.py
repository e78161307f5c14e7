"""Documents going into a corpus, and what a corpus is (its hits are core Sources)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Document:
    """One searchable text. `key` is unique within its corpus (a title, a path#part)."""

    corpus: str
    key: str
    title: str
    body: str
    description: str = ""
    location: str = ""
    kind: str = "document"


@dataclass(frozen=True, kw_only=True)
class CorpusInfo:
    """A named corpus: how many documents, and whose text it is."""

    name: str
    documents: int
    source: str
    license: str
    attribution: str
