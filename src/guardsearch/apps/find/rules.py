"""Objective rules on an article's description: is it one item of the requested type?

Wikipedia short descriptions are typed summaries ("1889 painting by Vincent van
Gogh", "French painter (1840–1926)", "Type of painting method"), so code can decide
most cases without a model:

- `no_description`: nothing to judge by;
- `person`: a lifespan "(1840–1926)" / "(born 1950)" marks a biography, even when the
  description names the type as a modifier ("Italian opera composer (1858–1924)"),
  unless the type is what the person is ("German composer (1809–1847)" for composer);
- `wrong_type`: the description does not name the item type at all;
- `category_not_instance`: it names the type only as a kind or a modifier ("Type of
  painting method", "Painting technique", "Paintings, often prehistoric, on cave
  walls", "Annual film festival in France", "Indian film series by Satyajit Ray"),
  not one attributed item;
- otherwise the type check passes and the qualifier is checked (evidence, then judge).
"""

from __future__ import annotations

import re

from guardsearch.apps.find.spec import forms

_LIFESPAN = re.compile(
    r"\([^()]*(?:\d\s*[–—-]\s*(?:c\.\s*)?\d|born\s+\d|\d\s*[–—-]\s*present)[^()]*\)", re.I
)
_KIND_WORDS = ("type", "style", "kind", "form", "process", "method", "technique", "genre", "use")
_KIND_AFTER = re.compile(
    r"\s+(technique|method|style|movement|genre|process|medium|type|tradition)s?\b", re.I
)
_GROUP_BEFORE = re.compile(r"\b(series|cycle|set|pair|collection|group)\s+of\s+$", re.I)
_MODIFIER_BEFORE = re.compile(r"\b(of|for|using|with|on|about)\s+$", re.I)
_ATTRIBUTION_AFTER = re.compile(r"\s*(by|attributed\s+to|from|in|at|of)\b", re.I)
_SPLIT_HEAD = re.compile(r"\s+(?:in|of|by|from|for|that|who|based|at|on)\s+|[,(;:]")
_WORD = re.compile(r"[^\W\d_][\w'-]*", re.UNICODE)
# Where a description's noun phrase ends: a preposition, a conjunction, punctuation.
_PHRASE_END = re.compile(
    r"\s+(?:in|of|by|from|for|that|which|who|based|at|on|and|or|with|about|to|over|across"
    r"|near|under|along|between|through|into|after)\b|[,(;:–—]",
    re.I,
)
# Words after the type that still leave it the head ("Film directed by ...", "Poem
# dealing with ...", "Poems primarily written ...").
_PARTICIPLES = frozenset(
    {"written", "made", "set", "shot", "drawn", "sung", "begun", "done", "built", "known"}
)
_NOT_NOUN = ("ed", "ing", "ly")
_CREATOR = re.compile(r"\b(?:by|attributed\s+to)\s+([^,;()]+?)\s*$", re.I)


def is_person(description: str) -> bool:
    return bool(_LIFESPAN.search(description))


def head_noun(description: str) -> str:
    """The head noun of a description's first phrase ("Art museum in Paris" -> museum)."""
    first = _SPLIT_HEAD.split(description, maxsplit=1)[0]
    words = _WORD.findall(first)
    return words[-1].lower() if words else ""


def kind_word(description: str) -> str:
    """The word that makes a description a kind rather than an item ("Type of ..." -> type)."""
    lowered = description.lower()
    for word in _KIND_WORDS:
        if re.search(rf"\b{word}\b", lowered):
            return word
    after = _KIND_AFTER.search(lowered)
    return after.group(1) if after else head_noun(description)


def creator_of(description: str) -> str:
    """The creator named by "... by X" / "... attributed to X" ('' if none)."""
    match = _CREATOR.search(description)
    return match.group(1).strip() if match else ""


def modified_noun(after: str) -> str:
    """The noun the type word modifies, from the text right after it ("film festival in
    France" -> festival), or '' when the type word ends its phrase ("film directed by")."""
    end = _PHRASE_END.search(after)
    words = _WORD.findall(after[: end.start()] if end else after)
    nouns = [w for w in words if not (w.lower().endswith(_NOT_NOUN) or w.lower() in _PARTICIPLES)]
    return nouns[0].lower() if nouns and words and words[0] == nouns[0] else ""


def type_rejection(description: str, item_type: str) -> str | None:
    """Why a description is not one `item_type` (a reason), or None if it is one.

    A biography (a lifespan) is an item only when the type is what the person is
    ("German composer and pianist (1833–1897)" is a composer); otherwise it is a
    `person` ("Italian opera composer (1858–1924)" is no opera)."""
    text = " ".join(description.split())
    if not text:
        return "no_description"
    one, many = forms(item_type)
    match = re.search(rf"\b({re.escape(one)}|{re.escape(many)})\b", text, re.I)
    if is_person(text):
        head = match is not None and _heads_phrase(text, match)
        return None if head else "person"
    if match is None:
        return "wrong_type"
    before, after = text[: match.start()], text[match.end() :]
    if modified_noun(after):
        return "category_not_instance"  # "film festival", "song competition"
    grouped = bool(_GROUP_BEFORE.search(before))
    if not grouped and (_MODIFIER_BEFORE.search(before) or _KIND_AFTER.match(after)):
        return "category_not_instance"
    is_plural = match.group(1).lower() == many and many != one
    if is_plural and not grouped and not _ATTRIBUTION_AFTER.match(after):
        return "category_not_instance"
    return None


def _heads_phrase(text: str, match: re.Match[str]) -> bool:
    """Is the matched type word a head noun, not a modifier ("opera composer") nor the
    object of a preposition ("composer of operas")?"""
    before, after = text[: match.start()], text[match.end() :]
    return not modified_noun(after) and not _MODIFIER_BEFORE.search(before)
