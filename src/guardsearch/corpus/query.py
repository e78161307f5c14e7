"""Turn free text into an FTS5 query that cannot be a syntax error.

Users and models write questions, not FTS5 syntax: a stray quote, `AND`, `-` or `:`
would be an error or change the meaning. We keep word tokens only, drop stopwords
(they match everything and only add noise to BM25), quote each term and OR them,
so BM25 ranks documents by how many rare terms they share with the question.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "tell",
        "give",
        "find",
        "show",
        "explain",
        "describe",
        "list",
        "name",
        "many",
        "much",
        "also",
        "known",
        "called",
        "whose",
    ]
)


def terms(text: str) -> list[str]:
    """Lower-cased content words of `text`, in order, without duplicates."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if word not in STOPWORDS and (len(word) > 1 or word.isdigit()):
            seen.setdefault(word, None)
    return list(seen)


def fts_query(text: str) -> str:
    """An FTS5 MATCH expression OR-ing the quoted content words ('' if there are none)."""
    words = terms(text)
    if not words:
        # A question made only of stopwords ("who is it?") still deserves a try.
        words = list(dict.fromkeys(w for w in _WORD.findall(text.lower()) if len(w) > 1))
    return " OR ".join(f'"{w}"' for w in words)
