"""What the two layers hand each other: the outer planner's plan for the inner loop and
its verdict on the results; what one inner probe of one query saw."""

from __future__ import annotations

import hashlib
from collections.abc import Hashable
from dataclasses import dataclass, replace

from guardsearch.core.errors import ConfigError
from guardsearch.core.source import Source


@dataclass(frozen=True, kw_only=True)
class ProbePlan:
    """A strategy for the inner loop: starting terms, a pool of narrowing terms, the
    kind of article wanted (a description filter candidate), an optional target band."""

    topic: str
    terms: tuple[str, ...]
    pool: tuple[str, ...] = ()
    kind: str = ""
    band: tuple[float, float] | None = None
    source: str = "model"

    def __post_init__(self) -> None:
        if not self.terms:
            raise ConfigError(f"a probe plan needs at least one term (topic {self.topic!r})")


@dataclass(frozen=True, kw_only=True)
class Evaluation:
    """The planner's verdict on the final results."""

    satisfied: bool
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class Observation:
    """What one probe of one query saw: the hit count and the top hits."""

    query: Hashable
    key: str
    count: int
    hits: tuple[Source, ...]
    from_memo: bool = False

    @property
    def result_hash(self) -> str:
        """A digest of the top 10 result keys (equal hashes: the same results came back)."""
        ids = "\n".join(h.key for h in self.hits[:10])
        return hashlib.sha256(f"{self.count}\n{ids}".encode()).hexdigest()[:16]

    def memoised(self) -> Observation:
        return replace(self, from_memo=True)
