"""Tier 2 in code: broader variants of a query that found nothing.

The model proposes synonyms and new angles during reflection; this is the cheap,
deterministic first try that needs no model call. Web engines AND their terms, so a
long question often matches nothing while its key words match a lot.
"""

from __future__ import annotations

import re

from guardsearch.corpus.query import terms

_QUOTED = re.compile(r"\"([^\"]+)\"")
_NAME = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of|the|de|la|von|van|[A-Z][\w'’-]*))*")


def broaden(query: str, limit: int = 3) -> list[str]:
    """Up to `limit` broader variants of `query`, most specific first, none equal to it."""
    variants: list[str] = []
    unquoted = _QUOTED.sub(r"\1", query)
    words = terms(unquoted)
    if words:
        variants.append(" ".join(words))  # no stopwords, no punctuation, no quotes
    names = [m.group(0).strip() for m in _NAME.finditer(unquoted) if len(m.group(0)) > 3]
    for name in names[:2]:
        variants.append(name)  # the named subject alone
    if len(words) > 3:
        longest = sorted(words, key=len, reverse=True)[:3]
        variants.append(" ".join(w for w in words if w in longest))
    seen = {" ".join(query.lower().split())}
    out = []
    for variant in variants:
        key = " ".join(variant.lower().split())
        if key and key not in seen:
            seen.add(key)
            out.append(variant)
    return out[:limit]
