"""FindSpec: what one attempt of `find` searches for and which filters it applies."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from guardsearch.core.errors import ConfigError


def plural(word: str) -> str:
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and len(word) > 2 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def singular(word: str) -> str:
    w = word.lower().strip()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "sses", "xes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return w[:-1]
    return w


def forms(word: str) -> tuple[str, str]:
    """The singular and plural of an item type ("paintings" -> painting, paintings)."""
    one = singular(word)
    return one, plural(one)


@dataclass(frozen=True, kw_only=True)
class FindSpec:
    """Keywords to search, keyword filters, source filters and the target item."""

    item_type: str
    qualifier: str = ""
    keywords: tuple[str, ...]
    positive: tuple[str, ...] = ()
    negative: tuple[str, ...] = ()
    require_description: tuple[str, ...] = ()
    via_creators: bool = False
    exclude_creators: tuple[str, ...] = ()
    k: int = 15
    replans: int = field(default=0)

    def __post_init__(self) -> None:
        if not self.item_type.strip():
            raise ConfigError("a find spec needs an item type (e.g. 'painting')")
        if not any(k.strip() for k in self.keywords):
            raise ConfigError("a find spec needs at least one keyword")
        if self.k < 1:
            raise ConfigError(f"k must be >= 1, got {self.k}")

    @property
    def query(self) -> str:
        words = [*self.keywords, *(p for p in self.positive if p not in self.keywords)]
        return " ".join(words)

    def evolve(self, **changes: Any) -> FindSpec:
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["query"] = self.query
        return data
