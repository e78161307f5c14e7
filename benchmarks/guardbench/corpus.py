"""The embedded Wikipedia summaries as plain records, and the text helpers the set
builders share (sentences, content words, document frequencies)."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache

from guardsearch.corpus import wikipedia
from guardsearch.corpus.query import terms

LICENSE = wikipedia.LICENSE
ATTRIBUTION = wikipedia.ATTRIBUTION
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
_ABBREVIATION = re.compile(r"\b(?:[A-Z]|St|Dr|Mr|Mrs|Jr|Sr|c|ca|vs|No|Co|Inc|U\.S)\.$")


@dataclass(frozen=True)
class Article:
    title: str
    description: str
    extract: str

    @property
    def url(self) -> str:
        return wikipedia.article_url(self.title)


@cache
def articles() -> dict[str, Article]:
    """Every summary with an extract, by title (the installed package's file)."""
    raw = json.loads(wikipedia.require_data_path().read_text(encoding="utf-8"))
    out = {}
    for title, entry in sorted(raw.items()):
        extract = " ".join(str(entry.get("extract") or "").split())
        if title.strip() and extract:
            out[title] = Article(title, str(entry.get("description") or "").strip(), extract)
    return out


def sentences(text: str) -> list[str]:
    """Sentences of an extract; a split after an initial or "St." is undone."""
    out: list[str] = []
    for piece in _SENTENCE.split(text.strip()):
        if out and _ABBREVIATION.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return [s.strip() for s in out if s.strip()]


def content_words(text: str) -> set[str]:
    return {w for w in terms(text) if not w.isdigit()}


@cache
def document_frequency() -> Counter[str]:
    """In how many articles (description + extract) each content word occurs."""
    counts: Counter[str] = Counter()
    for article in articles().values():
        counts.update(content_words(f"{article.description} {article.extract}"))
    return counts


def bare_title(title: str) -> str:
    """'Guernica (Picasso)' -> 'Guernica'."""
    return re.sub(r"\s*\([^)]*\)$", "", title).strip()
