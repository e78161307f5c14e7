"""Periods a qualifier names ("of the 17th century", "of the 1960s", "from 1889") and
the dates an article gives its subject, so a period condition is checked by code.

An item's date is, from its description first, then its first sentence:
- a person's lifespan "(1606–1669)" or "(born 1950)": the middle of the adult life,
  (birth + 20 + death) / 2 (a living person: birth + 30) - "a painter of the 17th
  century" is one who worked in it;
- a year at the start of a work's description ("1960 film by ...") or anywhere in it;
- an "Nth-century" phrase ("15th-century Italian painter"): that century's middle.
Centuries run 1601-1700 for the 17th; a decade "1960s" runs 1960-1969.
"""

from __future__ import annotations

import re

_CENTURY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)[\s-]+century\b", re.I)
_DECADE = re.compile(r"\b(\d{3})0s\b")
_YEAR_Q = re.compile(r"\b(?:in|from|of)\s+(\d{4})\b", re.I)
_LIFESPAN = re.compile(
    r"\((?:[^()]*?\b)?(?:c\.\s*)?(\d{3,4})(?:/\d+)?\s*[–—-]\s*(?:c\.\s*)?(\d{3,4})\)"
)
_BORN = re.compile(r"\(born\s+(\d{3,4})\)", re.I)
_YEAR = re.compile(r"\b(1\d{3}|20[0-2]\d)\b")
# A period phrase with its preposition ("of the 19th century", "from the 1960s", "in 1889").
_PERIOD_PHRASE = re.compile(
    r"\b(?:(?:of|from|in|during)\s+(?:the\s+)?)?(?:\d{1,2}(?:st|nd|rd|th)[\s-]+century|\d{3}0s)\b"
    r"|\b(?:in|from|of)\s+\d{4}\b",
    re.I,
)


def period_of(qualifier: str) -> tuple[int, int] | None:
    """The years a qualifier's period covers, or None when it names no period."""
    century = _CENTURY.search(qualifier)
    if century:
        n = int(century.group(1))
        return (n - 1) * 100 + 1, n * 100
    decade = _DECADE.search(qualifier)
    if decade:
        start = int(decade.group(1)) * 10
        return start, start + 9
    year = _YEAR_Q.search(qualifier)
    if year:
        return int(year.group(1)), int(year.group(1))
    return None


def date_of(text: str) -> int | None:
    """The year one text (a description or a first sentence) gives its subject."""
    life = _LIFESPAN.search(text)
    if life:
        born, died = int(life.group(1)), int(life.group(2))
        return (born + 20 + died) // 2 if died >= born + 20 else born
    born_only = _BORN.search(text)
    if born_only:
        return int(born_only.group(1)) + 30
    year = _YEAR.search(text)
    if year:
        return int(year.group(1))
    century = _CENTURY.search(text)
    if century:
        return (int(century.group(1)) - 1) * 100 + 50
    return None


def item_date(description: str, first_sentence: str) -> int | None:
    """The item's year: from its description, else from its first sentence."""
    own = date_of(description)
    return own if own is not None else date_of(first_sentence)


def period_words(qualifier: str) -> set[str]:
    """The words of a period phrase ("17th", "century", "1960s"): not place or maker words."""
    words: set[str] = set()
    for pattern in (_CENTURY, _DECADE, _YEAR_Q):
        for match in pattern.finditer(qualifier):
            words |= {w.lower() for w in re.findall(r"\w+", match.group(0))}
    return words


def without_period(qualifier: str) -> str:
    """The qualifier without its period phrase ("Italian of the 19th century" -> "Italian",
    "of the 1960s" -> ""): what is left once code has checked the period on the item's
    dates (`item_date`), for the judge, which cannot place a year in a century."""
    if period_of(qualifier) is None:
        return qualifier.strip()
    return " ".join(_PERIOD_PHRASE.sub(" ", qualifier).split()).strip(" ,;:")
