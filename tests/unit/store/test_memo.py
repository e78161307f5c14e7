"""The run memo (a CachedModel over the run's RunStoreCache) under concurrency: a
request in flight twice is paid once, and a concurrent durable run (broken anywhere)
resumes to the sequential run's result."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from durable_apps import STRATEGIES, answer_for

from guardsearch import (
    CachedModel,
    Completion,
    Message,
    ModelError,
    ModelRequest,
    ScriptedModel,
    Usage,
)
from guardsearch.runs import RunSpec, RunStoreCache, create_run, execute_run
from guardsearch.store.base import RunStore


def new_run(store: RunStore) -> str:
    return store.create_run(app="a", strategy="dfs", spec={}, fingerprint={"v": 1}).id


def run_of(memo: CachedModel) -> str:
    assert isinstance(memo.cache, RunStoreCache)
    return memo.cache.run_id


def request(text: str, seed: int = 0) -> ModelRequest:
    return ModelRequest(messages=(Message("user", text),), seed=seed, max_tokens=16)


class Slow:
    """Answers after yielding a few times; counts what it was paid for, per digest.
    Fails (once) or blocks on the requests it is told to."""

    name = "slow"

    def __init__(self, *, fail: set[str] | None = None, yields: int = 3) -> None:
        self.paid: dict[str, int] = {}
        self.fail = fail or set()
        self.yields = yields
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.release.set()

    async def complete(self, req: ModelRequest) -> Completion:
        text = req.messages[0].content
        self.paid[text] = self.paid.get(text, 0) + 1
        self.started.set()
        await self.release.wait()
        for _ in range(self.yields):
            await asyncio.sleep(0)
        if text in self.fail:
            self.fail.discard(text)
            raise ModelError(f"{text}: connection reset")
        return Completion(text=f"answer to {text}", usage=Usage(calls=1, completion_tokens=3))


async def test_a_run_store_cache_replays_what_the_run_paid_for_after_a_restart(
    store: RunStore,
) -> None:
    run, other = new_run(store), new_run(store)
    first = CachedModel(Slow(), RunStoreCache(store, run))  # type: ignore[arg-type]
    paid = await first.complete(request("q"))
    assert [c["digest"] for c in store.calls(run)] == [request("q").digest()]
    inner = Slow()
    resumed = CachedModel(inner, RunStoreCache(store, run))  # type: ignore[arg-type]
    assert await resumed.complete(request("q")) == paid
    assert inner.paid == {} and (resumed.hits, resumed.misses) == (1, 0)
    elsewhere = CachedModel(inner, RunStoreCache(store, other))  # type: ignore[arg-type]
    await elsewhere.complete(request("q"))  # another run's answers are not this run's
    assert inner.paid == {"q": 1} and (elsewhere.hits, elsewhere.misses) == (0, 1)


async def test_two_identical_requests_in_flight_are_paid_once(store: RunStore) -> None:
    inner = Slow()
    memo = CachedModel(inner, RunStoreCache(store, new_run(store)))  # type: ignore[arg-type]
    first, second, other = await asyncio.gather(
        memo.complete(request("q")), memo.complete(request("q")), memo.complete(request("r"))
    )
    assert first.text == second.text == "answer to q" and other.text == "answer to r"
    assert inner.paid == {"q": 1, "r": 1}
    assert (memo.misses, memo.hits) == (2, 1)
    assert len(store.calls(run_of(memo))) == 2
    assert not memo._inflight


async def test_many_identical_requests_at_once_are_paid_once(store: RunStore) -> None:
    inner = Slow()
    memo = CachedModel(inner, RunStoreCache(store, new_run(store)))  # type: ignore[arg-type]
    answers = await asyncio.gather(*(memo.complete(request("q")) for _ in range(6)))
    assert {a.text for a in answers} == {"answer to q"}
    assert inner.paid == {"q": 1} and (memo.misses, memo.hits) == (1, 5)
    # Different seeds are different requests: each is paid.
    await asyncio.gather(memo.complete(request("q", seed=1)), memo.complete(request("q", seed=2)))
    assert inner.paid == {"q": 3}


async def test_a_failed_call_is_not_shared_a_waiter_asks_on_its_own(store: RunStore) -> None:
    inner = Slow(fail={"q"})
    memo = CachedModel(inner, RunStoreCache(store, new_run(store)))  # type: ignore[arg-type]
    first, second = await asyncio.gather(
        memo.complete(request("q")), memo.complete(request("q")), return_exceptions=True
    )
    assert isinstance(first, ModelError)
    assert isinstance(second, Completion) and second.text == "answer to q"
    assert inner.paid == {"q": 2} and memo.misses == 1
    assert len(store.calls(run_of(memo))) == 1


async def test_cancelling_the_payer_or_a_waiter_spares_the_other(store: RunStore) -> None:
    inner = Slow()
    memo = CachedModel(inner, RunStoreCache(store, new_run(store)))  # type: ignore[arg-type]
    inner.release.clear()
    payer = asyncio.ensure_future(memo.complete(request("q")))
    await inner.started.wait()
    waiter = asyncio.ensure_future(memo.complete(request("q")))
    await asyncio.sleep(0)
    payer.cancel()  # the waiter is not cancelled with it: it asks on its own
    inner.release.set()
    assert (await waiter).text == "answer to q"
    assert payer.cancelled() and inner.paid == {"q": 2}

    inner.release.clear()
    payer = asyncio.ensure_future(memo.complete(request("r")))
    await asyncio.sleep(0)
    waiter = asyncio.ensure_future(memo.complete(request("r")))
    await asyncio.sleep(0)
    waiter.cancel()  # the payer goes on and its answer is kept
    inner.release.set()
    assert (await payer).text == "answer to r"
    assert waiter.cancelled() and inner.paid["r"] == 1
    assert {c["digest"] for c in store.calls(run_of(memo))} >= {request("r").digest()}


class Interleaved:
    """The durable tests' scripted answers, each after a few yields (so concurrent
    calls finish out of order); fails at its `at`-th call, once; counts payments."""

    def __init__(self, strategy: str, at: int = 0) -> None:
        self.inner = ScriptedModel(answer_for(strategy))
        self.at = at
        self.name = "scripted"
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.paid: dict[str, int] = {}

    async def complete(self, req: ModelRequest) -> Any:
        self.calls += 1
        if self.calls == self.at:
            raise ModelError("connection reset")
        digest = req.digest()
        self.paid[digest] = self.paid.get(digest, 0) + 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            for _ in range(1 + (self.calls * 7) % 4):
                await asyncio.sleep(0)
        finally:
            self.in_flight -= 1
        return await self.inner.complete(req)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_a_concurrent_durable_run_broken_anywhere_resumes_paying_once(
    store: RunStore, strategy: str
) -> None:
    """concurrency=4 and samples=2: the same result and calls
    as the sequential run; broken at any call, it resumes to that result, and every
    request is paid once (the memo keeps what the broken session's calls answered)."""
    options: dict[str, Any] = {"samples": 2}
    spec = RunSpec(app="durable_apps:search_app", strategy=strategy, model="s", options=options)
    whole = await execute_run(create_run(spec, store).id, store, model=Interleaved(strategy))
    fast = RunSpec(
        app="durable_apps:search_app",
        strategy=strategy,
        model="s",
        options={**options, "concurrency": 4},
    )
    model = Interleaved(strategy)
    concurrent = await execute_run(create_run(fast, store).id, store, model=model)
    assert (concurrent.status, concurrent.result) == (whole.status, whole.result)
    assert concurrent.calls == whole.calls
    assert model.max_in_flight > 1
    for at in range(1, whole.calls + 1):
        model = Interleaved(strategy, at)
        run = create_run(fast, store).id
        broken = await execute_run(run, store, model=model)
        assert broken.status == "failed" and "connection reset" in (broken.error or "")
        resumed = await execute_run(run, store, model=model)
        assert resumed.status == whole.status
        assert resumed.result == whole.result
        assert resumed.calls == whole.calls
        assert set(model.paid.values()) == {1}, "a resumed run paid for a call twice"
