"""What a `find` request asks for, read by code: the item noun, the rest of the condition
(the qualifier, in the request's own words), and which words are grounded in it.

The planner (a model) writes the spec, but everything it writes must come from the
request: "lakes in Africa" has the item noun "lakes" and the qualifier "in Africa", so
a plan with the qualifier "by Russian writers" (a prompt's example written back) is
refused, with feedback naming the words that are not in the request.
"""

from __future__ import annotations

import re

from guardsearch.apps.find.spec import forms
from guardsearch.corpus.query import terms

# Where the request's first noun phrase (the items wanted) ends.
_REQUEST_PHRASE_END = re.compile(
    r"\s+(?:by|from|in|of|for|that|which|who|with|about|at|on|made|written|painted|"
    r"composed|directed|built|located|set)\b|[,;:()]",
    re.I,
)
_LEAD = re.compile(
    r"^\s*(?:(?:(?:a\s+)?list\s+of|examples\s+of|some|famous|find|show\s+me|all|every|any)\s+)+",
    re.I,
)


def _text(request: str) -> str:
    return _LEAD.sub("", " ".join(request.split()))


def item_noun(request: str) -> str:
    """The noun naming the items a request asks for: the head of its first noun phrase
    ("paintings by Spanish painters" -> paintings, "famous Italian operas" -> operas);
    '' when there is none."""
    head = _REQUEST_PHRASE_END.split(_text(request), maxsplit=1)[0]
    words = terms(head)
    return words[-1] if words else ""


def request_qualifier(request: str) -> str:
    """The request's condition without its item noun, in its own words: "in Africa" for
    "lakes in Africa", "German" for "German composers", "by Russian writers" for
    "novels by Russian writers", '' for "volcanoes"."""
    text = _text(request)
    noun = item_noun(request)
    if not noun:
        return ""
    match = re.search(rf"\b{re.escape(noun)}\b", text, re.I)
    if match is None:
        return ""
    before, after = text[: match.start()].strip(), text[match.end() :].strip()
    return " ".join(p for p in (before, after) if p).strip(" ,;:")


def _close(word: str, other: str) -> bool:
    """Is `word` a close form of `other` (same singular, or one is the other's stem:
    Impressionism ~ impressionist, Russia ~ Russian)?"""
    if forms(word)[0] == forms(other)[0]:
        return True
    short, long_ = sorted((word, other), key=len)
    return len(short) >= 4 and long_.startswith(short[: max(4, len(short) - 2)])


def ungrounded(text: str, request: str) -> list[str]:
    """The content words of `text` that are not words (or close forms) of `request`."""
    asked = terms(request)
    return [w for w in terms(text) if not any(_close(w, a) for a in asked)]


def grounded_words(request: str) -> list[str]:
    """The request's content words and their singular/plural forms (what keywords may use)."""
    out: dict[str, None] = {}
    for word in terms(request):
        out.setdefault(word, None)
        if not word[0].isdigit():
            for form in forms(word):
                out.setdefault(form, None)
    return [w for w in out if len(w) >= 2]
