"""Search providers and the four error tiers, with injected faults."""

from __future__ import annotations

import asyncio
import random

import httpx
import pytest
from research_helpers import FakeProvider, SleepRecorder, hit, no_sleep, transient

from guardsearch.core.events import Trace
from guardsearch.corpus import CorpusIndex
from guardsearch.tools import (
    Backoff,
    CircuitBreaker,
    CorpusProvider,
    ResilienceSettings,
    ResilientSearch,
    SearchError,
    SearxngProvider,
    TransientSearchError,
    broaden,
    search_with_retry,
)


def searxng(handler) -> SearxngProvider:  # type: ignore[no-untyped-def]
    return SearxngProvider("http://searx.test", transport=httpx.MockTransport(handler))


def results(*titles: str) -> dict[str, object]:
    return {
        "results": [
            {"title": t, "url": f"https://w.test/{t}", "content": f"{t} text"} for t in titles
        ]
    }


async def test_searxng_provider_maps_json_results_to_hits() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=results("Seurat", "Signac"))

    hits = await searxng(handler).search("pointillism", 5)
    assert [h.title for h in hits] == ["Seurat", "Signac"]
    assert hits[0].location == "https://w.test/Seurat" and hits[0].rank == 1
    assert seen[0].url.params["format"] == "json" and seen[0].url.params["q"] == "pointillism"


async def test_server_errors_are_transient_and_client_errors_are_not() -> None:
    with pytest.raises(TransientSearchError):
        await searxng(lambda r: httpx.Response(500)).search("q", 3)
    with pytest.raises(TransientSearchError):
        await searxng(lambda r: httpx.Response(429)).search("q", 3)
    with pytest.raises(SearchError) as info:
        await searxng(lambda r: httpx.Response(403)).search("q", 3)
    assert not isinstance(info.value, TransientSearchError)
    with pytest.raises(SearchError):
        await searxng(lambda r: httpx.Response(200, text="<html>")).search("q", 3)


async def test_a_500_is_retried_with_exponential_backoff_and_jitter() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(500) if calls < 3 else httpx.Response(200, json=results("ok"))

    sleep = SleepRecorder()
    retried: list[int] = []
    hits = await search_with_retry(
        searxng(handler),
        "q",
        3,
        attempts=3,
        sleep=sleep,
        backoff=Backoff(rng=random.Random(7)),
        on_retry=lambda n, e, w: retried.append(n),
    )
    assert [h.title for h in hits] == ["ok"]
    assert calls == 3 and retried == [1, 2]
    first, second = sleep.waits
    assert 1.0 <= first < 2.0 and 2.0 <= second < 3.0  # 2**attempt + uniform(0, 1)


async def test_backoff_is_capped_at_ten_seconds() -> None:
    wait = Backoff(rng=random.Random(1))

    class State:
        attempt_number = 9

    assert wait(State()) == 10.0  # type: ignore[arg-type]


async def test_retries_stop_after_the_last_attempt_and_reraise() -> None:
    provider = FakeProvider("p", [transient()])
    with pytest.raises(TransientSearchError):
        await search_with_retry(provider, "q", 3, attempts=3, sleep=no_sleep)
    assert len(provider.queries) == 3


async def test_permanent_errors_are_not_retried() -> None:
    provider = FakeProvider("p", [SearchError("HTTP 403")])
    with pytest.raises(SearchError):
        await search_with_retry(provider, "q", 3, attempts=3, sleep=no_sleep)
    assert len(provider.queries) == 1


async def test_a_hanging_provider_times_out_as_a_transient_error() -> None:
    provider = FakeProvider("slow", ["hang"])
    with pytest.raises(TransientSearchError, match="timed out"):
        await search_with_retry(provider, "q", 3, attempts=2, timeout_s=0.01, sleep=no_sleep)
    assert len(provider.queries) == 2


def test_broaden_drops_stopwords_and_keeps_named_subjects() -> None:
    variants = broaden("Who painted A Sunday Afternoon on the Island of La Grande Jatte?")
    assert variants[0] == "painted sunday afternoon island la grande jatte"
    assert "Island of La Grande Jatte" in variants
    assert broaden("pointillism") == []


async def test_an_empty_result_is_reformulated_into_broader_queries() -> None:
    provider = FakeProvider(
        "web", lambda q: [hit("Seurat", "painter")] if q == "Georges Seurat" else []
    )
    trace = Trace()
    outcome = await ResilientSearch([provider], trace=trace, sleep=no_sleep).search(
        "Which painter was Georges Seurat really?", 5
    )
    assert outcome.reformulated_as == "Georges Seurat"
    assert [h.title for h in outcome.hits] == ["Seurat"]
    assert any(e.data.get("what") == "reformulate" for e in trace.of_kind("note"))


def test_the_breaker_opens_after_three_consecutive_failures() -> None:
    breaker = CircuitBreaker()
    for ok in (True, False, False):
        breaker.record(ok)
    assert not breaker.open
    breaker.record(False)
    assert breaker.open and "3 consecutive" in (breaker.reason or "")


def test_the_breaker_opens_when_half_of_the_queries_fail() -> None:
    breaker = CircuitBreaker()
    for ok in (False, True, False, True):
        breaker.record(ok)
    assert breaker.open and "2 of 4" in (breaker.reason or "")


async def test_the_fallback_provider_answers_when_the_primary_fails() -> None:
    primary = FakeProvider("primary", [transient("HTTP 503")])
    backup = FakeProvider("backup", [[hit("Seurat", "painter", "backup")]])
    trace = Trace()
    search = ResilientSearch([primary, backup], trace=trace, sleep=no_sleep)
    outcome = await search.search("Seurat", 5)
    assert outcome.provider == "backup" and not outcome.failed
    assert len(primary.queries) == 3  # tier 1 first, then tier 4
    assert [f.provider for f in outcome.faults] == ["primary"] * 3
    assert any(e.data.get("what") == "provider_failed" for e in trace.of_kind("note"))
    assert not search.degraded


async def test_a_dead_provider_is_skipped_once_its_own_breaker_opens() -> None:
    primary = FakeProvider("primary", [SearchError("HTTP 401")])
    backup = FakeProvider("backup", [[hit("x", "y", "backup")]])
    search = ResilientSearch([primary, backup], sleep=no_sleep)
    for i in range(5):
        await search.search(f"q{i}", 3)
    assert len(primary.queries) == 3  # three failures open its breaker; then it is skipped
    assert len(backup.queries) == 5


async def test_three_failed_queries_put_the_run_in_degraded_mode_and_stop_searching() -> None:
    provider = FakeProvider("web", [transient()])
    search = ResilientSearch([provider], settings=ResilienceSettings(attempts=2), sleep=no_sleep)
    outcomes = [await search.search(f"q{i}", 3) for i in range(4)]
    assert search.degraded
    assert [o.failed for o in outcomes] == [True, True, True, True]
    assert outcomes[3].skipped and len(provider.queries) == 6  # the 4th never reached it


async def test_an_unexpected_provider_bug_is_a_failure_not_a_crash() -> None:
    provider = FakeProvider("buggy", [ZeroDivisionError("oops")])
    outcome = await ResilientSearch([provider], sleep=no_sleep).search("q", 3)
    assert outcome.failed and "ZeroDivisionError" in (outcome.error or "")


async def test_corpus_provider_returns_hits_with_licence(small_index: CorpusIndex) -> None:
    hits = await CorpusProvider(small_index).search("Georges Seurat pointillism", 3)
    assert hits[0].title in {"Georges Seurat", "Pointillism"}
    assert hits[0].license == "CC BY-SA 4.0" and hits[0].attribution
    assert hits[0].kind == "wikipedia" and hits[0].provider == "corpus"


def test_corpus_provider_rejects_an_unknown_corpus(small_index: CorpusIndex) -> None:
    with pytest.raises(SearchError, match="no corpus named"):
        CorpusProvider(small_index, corpus="nope")


async def test_concurrent_corpus_searches_share_one_index(small_index: CorpusIndex) -> None:
    provider = CorpusProvider(small_index)
    batches = await asyncio.gather(*(provider.search("Seurat", 2) for _ in range(50)))
    assert all(b and b[0].title for b in batches)
