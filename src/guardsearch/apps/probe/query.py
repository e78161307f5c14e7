"""ProbeQuery: a boolean corpus query the probe policy can narrow and broaden.

    must        every term must match            ("french" AND "painter")
    any_of      at least one of them must match  ("impressionism" OR "realism")
    described   terms the article *description* must contain (a typed filter:
                description : "painter")
    exclude     terms that must not match        (NOT "museum")

`expression()` renders it as FTS5 syntax; user and model text never reaches FTS5
unquoted (terms are reduced to word tokens and quoted). `key()` is the normalised
form the memo uses: lower case, sorted, duplicates removed, per slot.
"""

from __future__ import annotations

from dataclasses import dataclass

from guardsearch.core.errors import ConfigError
from guardsearch.corpus.query import terms


def clean(term: str) -> str:
    """A term as word tokens joined by spaces ('' if nothing is left)."""
    return " ".join(terms(term))


def _norm(items: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted({c for t in items if (c := clean(t))}))


@dataclass(frozen=True)
class ProbeQuery:
    must: tuple[str, ...] = ()
    any_of: tuple[str, ...] = ()
    described: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for slot in ("must", "any_of", "described", "exclude"):
            object.__setattr__(self, slot, _norm(getattr(self, slot)))
        if not (self.must or self.any_of or self.described):
            raise ConfigError("a probe query needs at least one positive term")

    def key(self) -> str:
        parts = [
            f"{name}={'|'.join(values)}"
            for name, values in (
                ("must", self.must),
                ("any", self.any_of),
                ("desc", self.described),
                ("not", self.exclude),
            )
            if values
        ]
        return ";".join(parts)

    def expression(self) -> str:
        parts = [f'"{t}"' for t in self.must]
        if self.any_of:
            parts.append("(" + " OR ".join(f'"{t}"' for t in self.any_of) + ")")
        parts += [f'description : "{t}"' for t in self.described]
        expr = " AND ".join(parts)
        for term in self.exclude:
            expr = f'({expr}) NOT "{term}"'
        return expr

    def words(self) -> tuple[str, ...]:
        return (*self.must, *self.any_of, *self.described)
