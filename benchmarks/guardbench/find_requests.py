"""`find` requests of ten shapes, built from the corpus, with their right answers.

Every request's right answers (its gold set) are computed here from the articles'
descriptions and first sentences, by this module's own code (not the verifier's):

- what counts as one item of the type is `rules.type_rejection` (as in the first find
  eval): "1960 film directed by ..." is a film, "Italian opera composer (1858–1924)" is
  no opera but a composer;
- the condition is checked here on the article's description and first sentence:

- maker_nationality, "novels by Russian writers": the creator's article ("by X") says
  the nationality (where the maker has no article, the work's own article does);
- maker_name, "films by Alfred Hitchcock": the description's "by X" names the maker;
- place_country, "cities in Japan", and place_continent, "lakes in Africa": the
  description or first sentence names the place, or one hop: a title the description
  names ("Lake in Uganda") has a description naming it, and no other continent;
- nationality_role, "German composers": a biography saying the nationality;
- nationality_kind, "American films": a work saying the nationality;
- role_century, "painters of the 17th century": the middle of the adult life,
  (birth + 20 + death) / 2, in the century (1601-1700);
- kind_decade, "films of the 1960s", and kind_century, "paintings of the 19th
  century": the work's year (description, else first sentence) in the period;
- bare_class, "volcanoes": every item of the type.

"Says" reads the description and the first sentence's predicate (after is/was).
A request is kept when its gold set has `MIN_GOLD`..`MAX_GOLD` items. Each shape's
requests are split by a seeded shuffle into a tune half and a held-out half (at most
`HELD_OUT_PER_SHAPE` held-out requests per shape, to fit the model's time).
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

from guardbench.corpus import Article, articles, sentences
from guardbench.find_cases import KINDS, MAKERS, NATIONALITIES
from guardsearch.apps.find.rules import type_rejection
from guardsearch.apps.find.spec import plural

SEED = 3030
MIN_GOLD, MAX_GOLD = 3, 12
HELD_OUT_PER_SHAPE = 3
ROLES = (
    "painter", "composer", "writer", "poet", "novelist", "philosopher", "physicist",
    "mathematician", "architect", "sculptor", "chemist", "astronomer",
)  # fmt: skip
PLACES = ("city", "lake", "river", "island", "mountain", "volcano", "desert", "university")
CONTINENTS = ("Africa", "Europe", "Asia", "North America", "South America", "Oceania")
CLASSES = (
    "volcano", "constellation", "galaxy", "desert", "peninsula", "archipelago", "dam",
    "strait", "canal", "cathedral", "bridge", "sea", "plateau", "organelle", "vitamin",
)  # fmt: skip
_COMPOUND = re.compile(r"\b\w+[-‐‑](?:language|speaking|born|based)\b")
_BY = re.compile(
    r"\b(?:by|attributed\s+to)\s+"
    r"([A-Z][\w.'’-]*(?:\s+(?:van|de|da|von|der)?\s*[A-Z][\w.'’-]*)*)"
)
_LIFE = re.compile(
    r"\((?:[^()]*?\b)?(?:c\.\s*)?(\d{3,4})(?:/\d+)?\s*[–—-]\s*(?:c\.\s*)?(\d{3,4})\)"
)
_BORN = re.compile(r"\(born\s+(\d{3,4})\)", re.I)
_YEAR = re.compile(r"\b(1\d{3}|20[0-2]\d)\b")
_NTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)[\s-]+century\b", re.I)
_TITLE = re.compile(r"[A-Z][\w'’.-]*(?:\s+(?:of\s+the\s+|of\s+)?[A-Z][\w'’.-]*)*")


def _first(article: Article) -> str:
    found = sentences(article.extract)
    return found[0] if found else ""


def _said(article: Article) -> str:
    """The description and what the first sentence says the subject is (after is/was)."""
    first = re.search(r"\b(?:is|was|are|were)\b\s+(.*)$", _first(article))
    return f"{article.description}. {first.group(1) if first else ''}"


def _says(text: str, word: str) -> bool:
    return re.search(rf"\b{re.escape(word)}\b", _COMPOUND.sub(" ", text)) is not None


def _is(article: Article, kind: str) -> bool:
    return type_rejection(article.description, kind) is None


def _maker(article: Article) -> str:
    match = _BY.search(article.description)
    return match.group(1).strip() if match else ""


def _year(text: str) -> int | None:
    life = _LIFE.search(text)
    if life:
        born, died = int(life.group(1)), int(life.group(2))
        return (born + 20 + died) // 2 if died >= born + 20 else born
    born = _BORN.search(text)
    if born:
        return int(born.group(1)) + 30
    year = _YEAR.search(text)
    if year:
        return int(year.group(1))
    nth = _NTH.search(text)
    return (int(nth.group(1)) - 1) * 100 + 50 if nth else None


def _date(article: Article) -> int | None:
    own = _year(article.description)
    return own if own is not None else _year(_first(article))


def _in_place(article: Article, place: str) -> bool:
    """The article says it is in `place`, or a place its description names is in it
    (by that place's description, and not shared: "spanning Europe and Asia")."""
    by_title = articles()
    if _says(_said(article), place):
        return True
    rest = article.description.split(None, 1)[1] if " " in article.description else ""
    names = {p.strip(" .") for n in _TITLE.findall(rest) for p in [n, *n.split(" and ")]}
    linked = [by_title[n] for n in names if n in by_title]
    others = [c for c in CONTINENTS if c != place] if place in CONTINENTS else []
    return any(
        _says(a.description, place) and not any(_says(a.description, o) for o in others)
        for a in linked
        if not _LIFE.search(a.description)
    )


@cache
def _of_type(kind: str) -> list[Article]:
    return [a for a in articles().values() if _is(a, kind)]


def _gold(kind: str, keep: Callable[[Article], bool]) -> list[str]:
    return sorted(a.title for a in _of_type(kind) if keep(a))


def _countries() -> list[str]:
    return sorted(
        t for t, a in articles().items() if re.match(r"(?:Island )?[Cc]ountry in ", a.description)
    )


def _century_name(n: int) -> str:
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10 if n not in (11, 12, 13) else 0, "th")
    return f"{n}{suffix} century"


def _centuries(first: int, last: int) -> list[tuple[str, tuple[int, int]]]:
    return [(_century_name(n), ((n - 1) * 100 + 1, n * 100)) for n in range(first, last + 1)]


def _decades(first: int, last: int) -> list[tuple[str, tuple[int, int]]]:
    return [(f"{y}s", (y, y + 9)) for y in range(first, last + 1, 10)]


def _dated_in(span: tuple[int, int]) -> Callable[[Article], bool]:
    return lambda a: (d := _date(a)) is not None and span[0] <= d <= span[1]


def _shapes() -> Iterable[tuple[str, str, str, Callable[[Article], bool]]]:
    """(shape, request, item type, condition) for every candidate request."""
    by_title = articles()
    for kind in KINDS:
        for who in NATIONALITIES:

            def made_by(a: Article, who: str = who) -> bool:
                creator = by_title.get(_maker(a))
                if creator is None:  # no maker's article: the work's own says it
                    return _says(_said(a), who)
                person = _LIFE.search(creator.description) or _BORN.search(creator.description)
                return person is not None and _says(_said(creator), who)

            yield "maker_nationality", f"{plural(kind)} by {who} {MAKERS[kind]}", kind, made_by
    makers = defaultdict(set)
    for kind in KINDS:
        for a in _of_type(kind):
            if _maker(a) in by_title:
                makers[(kind, _maker(a))].add(a.title)
    for (kind, name), _titles in sorted(makers.items()):
        yield "maker_name", f"{plural(kind)} by {name}", kind, lambda a, n=name: _maker(a) == n
    for place in PLACES:
        for country in _countries():
            yield (
                "place_country",
                f"{plural(place)} in {country}",
                place,
                lambda a, c=country: _in_place(a, c),
            )
        for continent in CONTINENTS:
            yield (
                "place_continent",
                f"{plural(place)} in {continent}",
                place,
                lambda a, c=continent: _in_place(a, c),
            )
    for who in NATIONALITIES:
        for role in ROLES:
            yield (
                "nationality_role",
                f"{who} {plural(role)}",
                role,
                lambda a, w=who: _says(_said(a), w),
            )
        for kind in KINDS:
            yield (
                "nationality_kind",
                f"{who} {plural(kind)}",
                kind,
                lambda a, w=who: _says(_said(a), w),
            )
    periods: list[tuple[str, str, Iterable[tuple[str, tuple[int, int]]]]] = [
        *(("role_century", role, _centuries(12, 20)) for role in ROLES),
        *(("kind_decade", kind, _decades(1900, 2010)) for kind in KINDS),
        *(("kind_century", kind, _centuries(15, 20)) for kind in KINDS),
    ]
    for shape, kind, spans in periods:
        for name, span in spans:
            yield shape, f"{plural(kind)} of the {name}", kind, _dated_in(span)
    for kind in CLASSES:
        yield "bare_class", plural(kind), kind, lambda a: True


@cache
def requests() -> list[dict[str, Any]]:
    """Every kept request: shape, request, item type, gold titles, split."""
    by_shape: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for shape, request, kind, keep in _shapes():
        gold = _gold(kind, keep)
        if MIN_GOLD <= len(gold) <= MAX_GOLD:
            by_shape[shape].append(
                {"shape": shape, "request": request, "kind": kind, "right": gold}
            )
    rows: list[dict[str, Any]] = []
    rng = random.Random(SEED)
    for shape in sorted(by_shape):
        group = sorted(by_shape[shape], key=lambda r: r["request"])
        rng.shuffle(group)
        half = len(group) // 2
        held = group[: min(half, HELD_OUT_PER_SHAPE)] if half else []
        for row in group:
            row["split"] = "held_out" if row in held else "tune"
        rows += group
    return rows
