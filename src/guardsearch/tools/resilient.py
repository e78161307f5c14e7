"""ResilientSearch: the four error tiers (docs/research.md) around a list of providers.

1. retry transient errors with backoff and jitter (`retry.py`);
2. reformulate a query that found nothing into broader variants (`reformulate.py`);
3. a circuit breaker over query outcomes; once open the run is in degraded mode;
4. fall back to the next provider when one fails (each provider has its own breaker,
   so a dead provider is skipped instead of being retried for every query).

One instance serves one run: breakers count this run's outcomes. Every retry,
fallback, reformulation and breaker trip is an event in the run's trace and travels
with the query's outcome (`faults` for failed attempts, `notes` for what the tiers
did about them), so the research loop can report each one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from guardsearch.core.errors import ConfigError
from guardsearch.core.events import Trace
from guardsearch.core.source import Source
from guardsearch.tools.base import SearchError, SearchProvider
from guardsearch.tools.breaker import CircuitBreaker
from guardsearch.tools.reformulate import broaden
from guardsearch.tools.retry import Backoff, Sleep, search_with_retry


@dataclass(frozen=True, kw_only=True)
class SearchFault:
    """One failed search attempt: which provider, which try, what went wrong."""

    provider: str
    attempt: int
    error: str
    retried_after_s: float | None = None

    @property
    def what(self) -> str:
        """ "retry" (tier 1 tries again) or "provider_failed" (tier 4 moves on)."""
        return "retry" if self.retried_after_s is not None else "provider_failed"

    @property
    def tier(self) -> int:
        return 1 if self.retried_after_s is not None else 4


@dataclass(frozen=True, kw_only=True)
class SearchNote:
    """What a tier did for one query: reformulate (2), circuit_open (3), fallback or
    provider_circuit_open (4)."""

    what: str
    tier: int
    detail: str
    provider: str | None = None


@dataclass(frozen=True, kw_only=True)
class QueryOutcome:
    """What one query came back with, after every tier had its say."""

    query: str
    hits: tuple[Source, ...] = ()
    provider: str | None = None
    error: str | None = None
    faults: tuple[SearchFault, ...] = ()
    notes: tuple[SearchNote, ...] = ()
    reformulated_as: str | None = None
    skipped: bool = False

    @property
    def failed(self) -> bool:
        return self.error is not None

    @property
    def empty(self) -> bool:
        return not self.hits


@dataclass(frozen=True, kw_only=True)
class ResilienceSettings:
    """Knobs of the four tiers (docs/research.md gives the defaults)."""

    attempts: int = 3
    timeout_s: float = 10.0
    backoff_base_s: float = 1.0
    max_wait_s: float = 10.0
    consecutive_failures: int = 3
    failure_ratio: float = 0.5
    min_queries_for_ratio: int = 4
    reformulate_empty: bool = True


@dataclass
class ResilientSearch:
    """Searches through `providers` in order with retry, reformulation, breaker, fallback."""

    providers: Sequence[SearchProvider]
    settings: ResilienceSettings = field(default_factory=ResilienceSettings)
    trace: Trace = field(default_factory=Trace)
    sleep: Sleep = asyncio.sleep
    backoff: Backoff | None = None
    failures: int = 0

    def __post_init__(self) -> None:
        if not self.providers:
            raise ConfigError("ResilientSearch needs at least one search provider")
        s = self.settings
        self.breaker = self._new_breaker()
        self.provider_breakers = {p.name: self._new_breaker() for p in self.providers}
        if self.backoff is None:
            self.backoff = Backoff(base_s=s.backoff_base_s, max_wait_s=s.max_wait_s)

    def _new_breaker(self) -> CircuitBreaker:
        s = self.settings
        return CircuitBreaker(
            consecutive=s.consecutive_failures,
            ratio=s.failure_ratio,
            min_calls=s.min_queries_for_ratio,
        )

    @property
    def degraded(self) -> bool:
        """True once the run-level breaker opened: answers rest on partial information."""
        return self.breaker.open

    async def search(self, query: str, k: int) -> QueryOutcome:
        if self.breaker.open:
            return QueryOutcome(
                query=query, skipped=True, error=f"search circuit open: {self.breaker.reason}"
            )
        outcome = await self._across_providers(query, k)
        if not outcome.failed and outcome.empty and self.settings.reformulate_empty:
            faults, notes = list(outcome.faults), list(outcome.notes)
            for variant in broaden(query):
                self.trace.emit(
                    "note", step="search", what="reformulate", tier=2, query=query, variant=variant
                )
                retry = await self._across_providers(variant, k)
                faults += retry.faults
                notes.append(
                    SearchNote(
                        what="reformulate",
                        tier=2,
                        detail=f"no results; broader query {variant!r} found "
                        f"{len(retry.hits)} result(s)",
                        provider=retry.provider,
                    )
                )
                notes += retry.notes
                if retry.hits:
                    outcome = QueryOutcome(
                        query=query,
                        hits=retry.hits,
                        provider=retry.provider,
                        faults=tuple(faults),
                        notes=tuple(notes),
                        reformulated_as=variant,
                    )
                    break
            else:
                outcome = replace(outcome, faults=tuple(faults), notes=tuple(notes))
        was_open = self.breaker.open
        self.breaker.record(not outcome.failed)
        if self.breaker.open and not was_open:
            self.trace.emit(
                "note", step="search", what="circuit_open", tier=3, reason=self.breaker.reason
            )
            note = SearchNote(
                what="circuit_open",
                tier=3,
                detail=f"search circuit opened ({self.breaker.reason}): degraded mode",
            )
            outcome = replace(outcome, notes=(*outcome.notes, note))
        return outcome

    async def _across_providers(self, query: str, k: int) -> QueryOutcome:
        faults: list[SearchFault] = []
        notes: list[SearchNote] = []
        failed: str | None = None  # the provider that failed this query just before
        for provider in self.providers:
            breaker = self.provider_breakers[provider.name]
            if breaker.open:
                continue
            if failed is not None:
                detail = f"{failed} failed; falling back to {provider.name}"
                self.trace.emit(
                    "note",
                    step="search",
                    what="fallback",
                    tier=4,
                    provider=provider.name,
                    query=query,
                    failed=failed,
                )
                notes.append(
                    SearchNote(what="fallback", tier=4, detail=detail, provider=provider.name)
                )

            def on_retry(
                attempt: int, error: BaseException, wait: float, name: str = provider.name
            ) -> None:
                self.failures += 1
                faults.append(
                    SearchFault(
                        provider=name,
                        attempt=attempt,
                        error=str(error),
                        retried_after_s=round(wait, 3),
                    )
                )
                self.trace.emit(
                    "retry",
                    step="search",
                    tier=1,
                    provider=name,
                    query=query,
                    attempt=attempt + 1,
                    wait_s=round(wait, 3),
                    error=str(error),
                )

            s = self.settings
            try:
                hits = await search_with_retry(
                    provider,
                    query,
                    k,
                    attempts=s.attempts,
                    timeout_s=s.timeout_s,
                    backoff=self.backoff,
                    sleep=self.sleep,
                    on_retry=on_retry,
                )
            except Exception as exc:
                # A provider's own bug must not crash the run: it is one more failure.
                self._provider_failed(provider.name, query, exc, faults, notes)
                failed = provider.name
                continue
            breaker.record(True)
            return QueryOutcome(
                query=query,
                hits=tuple(hits),
                provider=provider.name,
                faults=tuple(faults),
                notes=tuple(notes),
            )
        error = faults[-1].error if faults else "every search provider is switched off"
        return QueryOutcome(query=query, error=error, faults=tuple(faults), notes=tuple(notes))

    def _provider_failed(
        self,
        name: str,
        query: str,
        exc: Exception,
        faults: list[SearchFault],
        notes: list[SearchNote],
    ) -> None:
        """Book a provider's failed query: a fault, its breaker, the events and, when the
        breaker opens now, a note that the provider is skipped from now on."""
        error = str(exc) if isinstance(exc, SearchError) else f"{type(exc).__name__}: {exc}"
        breaker = self.provider_breakers[name]
        self.failures += 1
        was_open = breaker.open
        breaker.record(False)
        faults.append(SearchFault(provider=name, attempt=self.settings.attempts, error=error))
        self.trace.emit(
            "note",
            step="search",
            what="provider_failed",
            tier=4,
            provider=name,
            query=query,
            error=error,
            provider_circuit_open=breaker.open,
        )
        if breaker.open and not was_open:
            self.trace.emit(
                "note",
                step="search",
                what="provider_circuit_open",
                tier=4,
                provider=name,
                reason=breaker.reason,
            )
            notes.append(
                SearchNote(
                    what="provider_circuit_open",
                    tier=4,
                    detail=f"{name} skipped from now on ({breaker.reason})",
                    provider=name,
                )
            )
