"""Research limits: complexity tiers, environment defaults, per-request options.

Precedence, lowest to highest: the tier's numbers, the `RESEARCH_*` environment
variables, explicit options of the request. `max_queries` and `max_sources` bound
each iteration's search (the plan's queries cut to `max_queries`, the hits of all
queries to `max_sources`); the iterations and the run's `Budget` (tokens and
the loop's seconds, `default_budget`) bound the whole run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from guardsearch.core.budget import Budget
from guardsearch.core.errors import ConfigError

TierChoice = Literal["auto", "simple", "standard", "deep"]
SupportMethod = Literal["lexical", "model", "off"]


@dataclass(frozen=True, kw_only=True)
class Tier:
    name: Literal["simple", "standard", "deep"]
    max_iters: int
    max_queries: int
    max_sources: int


TIERS: dict[str, Tier] = {
    "simple": Tier(name="simple", max_iters=2, max_queries=3, max_sources=5),
    "standard": Tier(name="standard", max_iters=5, max_queries=10, max_sources=15),
    "deep": Tier(name="deep", max_iters=10, max_queries=15, max_sources=20),
}
DEFAULT_TIER = "standard"

ENV = {
    "max_iters": "RESEARCH_MAX_ITERS",
    "max_queries": "RESEARCH_MAX_QUERIES",
    "max_sources": "RESEARCH_MAX_SOURCES",
}
# The default budget: tokens of the whole run, seconds of the loop (the synthesis may
# take `synthesis_grace_s` more), each overridable by an environment variable.
DEFAULT_TOKENS = 40_000
DEFAULT_SECONDS = 120.0
BUDGET_ENV = {"tokens": "RESEARCH_TOKEN_BUDGET", "seconds": "RESEARCH_MAX_EXECUTION_TIME_S"}


def default_budget(env: Mapping[str, str] | None = None) -> Budget:
    """The research budget when a run is given none: 40,000 tokens and 120 s of loop
    time, or `RESEARCH_TOKEN_BUDGET` / `RESEARCH_MAX_EXECUTION_TIME_S`."""
    env = os.environ if env is None else env
    caps: dict[str, float] = {"tokens": DEFAULT_TOKENS, "seconds": DEFAULT_SECONDS}
    for name, var in BUDGET_ENV.items():
        raw = env.get(var)
        if raw is None or not raw.strip():
            continue
        try:
            caps[name] = float(raw) if name == "seconds" else int(raw)
        except ValueError as exc:
            raise ConfigError(f"{var}={raw!r} is not a number") from exc
    return Budget.of(caps)


@dataclass(frozen=True, kw_only=True)
class ResearchConfig:
    """Everything that shapes one research run. None means "take the tier's number"."""

    tier: TierChoice = "auto"
    max_iters: int | None = None
    max_queries: int | None = None
    max_sources: int | None = None
    # Hits kept per query; max_sources caps the iteration's total.
    hits_per_query: int = 5
    # Sources shown to the synthesiser, best first: a small model reads a few well.
    synthesis_sources: int = 5
    snippet_chars: int = 600
    # Compaction (compaction.py): keep this many results in full, summarise the rest.
    active_results: int = 8
    compaction_ratio: float = 0.25
    state_token_cap: int = 50_000
    # Time the synthesis may take beyond the budget's seconds (the loop stops at the
    # limit, but the answer must still be written).
    synthesis_grace_s: float = 120.0
    rmax: int = 3
    # Code ends the search when a retrieved source about the question's subject holds
    # a clause that can answer it (evidence.answer_clauses), without a reflection call;
    # False: the model's reflection always decides (as the seed's loop does).
    evidence_stop: bool = True
    # Search the names a subject source mentions when no retrieved source can answer
    # yet (the second hop of "the director of Psycho ... born").
    hops: bool = True
    support: SupportMethod = "lexical"
    support_threshold: float = 0.5
    plan_max_tokens: int = 200
    reflect_max_tokens: int = 200
    synthesize_max_tokens: int = 300

    def __post_init__(self) -> None:
        if self.tier not in ("auto", *TIERS):
            raise ConfigError(f"unknown tier {self.tier!r}; use auto, simple, standard or deep")
        for name in ("max_iters", "max_queries", "max_sources"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"{name} must be >= 1, got {value}")
        if self.support not in ("lexical", "model", "off"):
            raise ConfigError(f"unknown support method {self.support!r}; use lexical, model or off")
        if not 0 < self.support_threshold <= 1:
            raise ConfigError("support_threshold must be in (0, 1]")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **base: Any) -> ResearchConfig:
        """Defaults overridden by the RESEARCH_* environment variables."""
        env = os.environ if env is None else env
        values: dict[str, Any] = dict(base)
        for name, var in ENV.items():
            raw = env.get(var)
            if raw is None or not raw.strip():
                continue
            try:
                values[name] = int(raw)
            except ValueError as exc:
                raise ConfigError(f"{var}={raw!r} is not a number") from exc
        tier = env.get("RESEARCH_TIER")
        if tier and "tier" not in values:
            values["tier"] = tier
        return cls(**values)

    def with_options(self, **options: Any) -> ResearchConfig:
        """A copy with the given non-None options (a request's explicit choices)."""
        known = {f.name for f in fields(self)}
        unknown = set(options) - known
        if unknown:
            raise ConfigError(f"unknown research option(s): {', '.join(sorted(unknown))}")
        return replace(self, **{k: v for k, v in options.items() if v is not None})

    def limits(self, detected: str | None) -> Tier:
        """The run's limits: explicit tier, else the planner's guess, else standard;
        explicit numbers (env or request) override the tier's."""
        name = self.tier if self.tier != "auto" else (detected or DEFAULT_TIER)
        tier = TIERS.get(name, TIERS[DEFAULT_TIER])
        return Tier(
            name=tier.name,
            max_iters=self.max_iters or tier.max_iters,
            max_queries=self.max_queries or tier.max_queries,
            max_sources=self.max_sources or tier.max_sources,
        )
