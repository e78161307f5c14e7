"""Source: one retrieved thing — a corpus passage, a web page, a probe hit, a find candidate."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Source:
    """One retrieved source: what it says, where it lives, who found it and how it ranked.

    Every retriever (corpus index, search providers, probes) returns Sources and every
    consumer (research, review, probe, the HTTP service) reads them. `score` is higher
    for better hits, whatever the backend's own scale. `id` is set by whoever numbers
    or names the sources (research's "[1]", a test's "a#1"); `key` identifies a source
    whether or not it has one.
    """

    id: str = ""
    title: str
    location: str = ""  # a URL or file:// path: what a citation points at
    text: str = ""  # the body, a passage or a snippet
    description: str = ""
    kind: str = "web"  # web, wikipedia, document, ...
    provider: str = ""  # who retrieved it: "corpus:wikipedia", "searxng:URL", a corpus name
    query: str = ""  # the query that retrieved it, when one consumer runs several
    rank: int = 0  # 1 = the provider's best hit; 0 = unranked
    score: float = 0.0
    license: str = ""
    attribution: str = ""

    @property
    def key(self) -> str:
        """What identifies this source when it is found again: id, else location, else title."""
        return self.id or self.location or self.title

    def as_dict(self) -> dict[str, Any]:
        """Every field, JSON-ready."""
        return asdict(self)
