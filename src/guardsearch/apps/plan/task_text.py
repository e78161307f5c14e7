"""Words of a task or a plan step, normalised so the task guards can compare them.

A constraint ("12 people", "one day", "2,000 euros") and a step that addresses it
("book a room for twelve", "full-day agenda", "2000 EUR") rarely share their exact
text. Both go through `words`: lower case, `_`/`-`/`/` as spaces, number words and
thousands separators as plain digits ("twelve" → 12, "an hour" → 1 hour, "2,000" and
"2k" → 2000), a fraction of a time unit as the smaller unit ("half an hour" → 30 minute,
"a day and a half" → 36 hour), British and American spellings alike (-ise/-ize), each
word stemmed by the Snowball English stemmer ("guests" → guest, "wiping" → wipe), stop
words dropped. A phrase is *in* a text when every one of its words is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache
from itertools import pairwise

import snowballstemmer

NUMBER_WORDS: dict[str, int] = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "hundred": 100,
    "dozen": 12,
    "single": 1,
}
_STOP_TEXT = (
    "a an the of to in on at for with and or by from into onto per as is are be it its "
    "this that these those our your their my all any each every up out off over under "
    "about via than then so do"
)
STOP_WORDS = frozenset(_STOP_TEXT.split(" "))
_STEMMER = snowballstemmer.stemmer("english")
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[a-z]+")


def number_text(value: float) -> str:
    """`value` as the digits `words` gives for it (12, 2000, 1.5)."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def parse_number(text: str) -> float | None:
    """A number as a task writes it: "12", "2,000", "2 000"-less "2k", "1.5", "twelve"."""
    raw = text.strip().lower().replace(" ", "")
    if raw in NUMBER_WORDS:
        return float(NUMBER_WORDS[raw])
    scale = 1000.0 if raw.endswith("k") else 1.0
    raw = raw.rstrip("k")
    if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", raw):
        raw = raw.replace(",", "")
    elif re.fullmatch(r"\d+,\d{1,2}", raw):  # a decimal comma: 2,5
        raw = raw.replace(",", ".")
    try:
        return float(raw) * scale
    except ValueError:
        return None


# A time unit and the next smaller one it is counted in when a fraction of it is said.
SMALLER_UNIT: dict[str, tuple[str, int]] = {
    "week": ("day", 7),
    "day": ("hour", 24),
    "hour": ("minute", 60),
    "minute": ("second", 60),
    "year": ("month", 12),
}
_FRACTIONS = {"half": 0.5, "quarter": 0.25, "three quarters": 0.75}
_ONE = r"(?:\d+|a|an|one)"
FRACTION = re.compile(
    r"\b(?:(?P<part>half|(?:a\s+)?quarter|three\s+quarters)\s+(?:of\s+)?(?:a|an)\s+(?P<u1>[a-z]+?)"
    rf"|(?P<w2>{_ONE})\s+and\s+a\s+half\s+(?P<u2>[a-z]+?)s?"
    rf"|(?P<w3>{_ONE})\s+(?P<u3>[a-z]+?)s?\s+and\s+a\s+half)\b",
    re.I,
)


def fraction_value(match: re.Match[str]) -> tuple[float, str] | None:
    """The amount and unit a fraction of a time unit says ("half an hour" → 0.5 hour,
    "an hour and a half" / "one and a half hours" → 1.5 hour); None: no time unit."""
    unit = (match.group("u1") or match.group("u2") or match.group("u3")).lower()
    if unit not in SMALLER_UNIT:
        return None
    if match.group("part"):
        part = " ".join(w for w in match.group("part").lower().split() if w != "a")
        return _FRACTIONS[part], unit
    whole = (match.group("w2") or match.group("w3")).lower()
    return (1.0 if whole in ("a", "an", "one") else float(whole)) + 0.5, unit


def _fraction_digits(match: re.Match[str]) -> str:
    """A fraction of a time unit as a count of the smaller unit ("half an hour" → "30
    minute"), the way a step or a task may say the same time."""
    found = fraction_value(match)
    if found is None:
        return match.group(0)
    value, unit = found
    smaller, factor = SMALLER_UNIT[unit]
    return f"{number_text(value * factor)} {smaller}"


def _numbers_as_digits(text: str) -> str:
    text = FRACTION.sub(_fraction_digits, text)
    text = re.sub(r"\b(?:a|an)\s+(?=(?:minute|hour|day|week|month|year)s?\b)", "1 ", text)
    text = re.sub(
        r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\b\d+(?:\.\d+)?k\b",
        lambda m: number_text(parse_number(m.group(0)) or 0.0),
        text,
    )
    tens = "twenty|thirty|forty|fifty|sixty"
    ones = "one|two|three|four|five|six|seven|eight|nine"
    text = re.sub(  # "twenty-five" → 25
        rf"\b({tens})[\s-]({ones})\b",
        lambda m: str(NUMBER_WORDS[m.group(1)] + NUMBER_WORDS[m.group(2)]),
        text,
    )
    return re.sub(
        r"\b(" + "|".join(NUMBER_WORDS) + r")\b",
        lambda m: str(NUMBER_WORDS[m.group(1)]),
        text,
    )


@cache
def stem(word: str) -> str:
    if word[0].isdigit():
        return word
    word = re.sub(r"is(e|es|ed|ing|ation|ations)$", r"iz\1", word)  # organise = organize
    return str(_STEMMER.stemWord(word))


def words(text: str) -> tuple[str, ...]:
    """The normalised content words of `text`, in order (see the module docstring)."""
    lowered = re.sub(r"[_/\-–]", " ", text.lower())
    lowered = re.sub(r"[€$£]", " ", lowered)
    tokens = _TOKEN.findall(_numbers_as_digits(lowered))
    return tuple(stem(t) for t in tokens if t not in STOP_WORDS)


def with_compounds(found: Sequence[str]) -> set[str]:
    """`found` and each pair of neighbours joined ("post mortem" is also "postmortem")."""
    return {*found, *(a + b for a, b in pairwise(found))}


def contains(text_words: Iterable[str], phrase: str | Sequence[str]) -> bool:
    """Is every word of `phrase` among `text_words`? (An empty phrase is in nothing.)"""
    wanted = words(phrase) if isinstance(phrase, str) else tuple(phrase)
    have = set(text_words)
    return bool(wanted) and all(w in have for w in wanted)
