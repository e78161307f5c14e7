"""Multi-objective scoring of results: weighted objectives, each in [0, 1].

    score = sum(w_i * objective_i(hit)) / sum(w_i)

The default objectives judge a hit against the topic: `typed` (the description names
the wanted kind and topic terms: a short typed summary is the strongest signal),
`coverage` (how many topic terms the article mentions), `relevance` (the backend's
rank) and `title` (a topic term in the title). Pass other objectives or weights to
trade them differently; the policy picks beam variants and ranks results with it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from guardsearch.core.errors import ConfigError
from guardsearch.core.source import Source
from guardsearch.corpus.query import terms


def stem(word: str) -> str:
    return word[: max(4, len(word) - 2)] if len(word) > 5 else word


@dataclass(frozen=True, kw_only=True)
class ScoreContext:
    topic_terms: tuple[str, ...]
    kind: str = ""

    @classmethod
    def of(cls, topic: str, kind: str = "") -> ScoreContext:
        return cls(topic_terms=tuple(terms(topic)), kind=kind.lower().strip())


Objective = Callable[[Source, ScoreContext], float]


def _fraction(words: Sequence[str], text: str) -> float:
    if not words:
        return 0.0
    lowered = text.lower()
    return sum(1 for w in words if stem(w) in lowered) / len(words)


def typed(hit: Source, ctx: ScoreContext) -> float:
    wanted = [*ctx.topic_terms, *([ctx.kind] if ctx.kind else [])]
    return _fraction(list(dict.fromkeys(wanted)), hit.description)


def coverage(hit: Source, ctx: ScoreContext) -> float:
    return _fraction(ctx.topic_terms, f"{hit.title} {hit.description} {hit.text}")


def relevance(hit: Source, ctx: ScoreContext) -> float:
    return max(0.0, min(1.0, hit.score))


def title(hit: Source, ctx: ScoreContext) -> float:
    return 1.0 if _fraction(ctx.topic_terms, hit.title) > 0 else 0.0


DEFAULT_OBJECTIVES: Mapping[str, Objective] = MappingProxyType(
    {"typed": typed, "coverage": coverage, "relevance": relevance, "title": title}
)
DEFAULT_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {"typed": 0.4, "coverage": 0.3, "relevance": 0.2, "title": 0.1}
)


@dataclass(frozen=True)
class WeightedScorer:
    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    objectives: Mapping[str, Objective] = field(default_factory=lambda: dict(DEFAULT_OBJECTIVES))

    def __post_init__(self) -> None:
        unknown = set(self.weights) - set(self.objectives)
        if unknown:
            raise ConfigError(f"weights for unknown objectives: {sorted(unknown)}")
        if any(w < 0 for w in self.weights.values()) or sum(self.weights.values()) <= 0:
            raise ConfigError("objective weights must be >= 0 and not all zero")

    def breakdown(self, hit: Source, ctx: ScoreContext) -> dict[str, float]:
        return {name: self.objectives[name](hit, ctx) for name in self.weights}

    def score(self, hit: Source, ctx: ScoreContext) -> float:
        parts = self.breakdown(hit, ctx)
        total = sum(self.weights.values())
        return sum(self.weights[n] * v for n, v in parts.items()) / total

    def mean(self, hits: Sequence[Source], ctx: ScoreContext, top: int = 10) -> float:
        shown = hits[:top]
        return sum(self.score(h, ctx) for h in shown) / len(shown) if shown else 0.0

    def rank(self, hits: Sequence[Source], ctx: ScoreContext) -> list[Source]:
        return sorted(hits, key=lambda h: -self.score(h, ctx))
