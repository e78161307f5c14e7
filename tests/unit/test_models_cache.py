"""WrapperModel passes the inner model through; CachedModel answers a known request from its
cache (dict or file; the run-store cache: tests/unit/store/test_memo.py), pays once per
request, and a replay is a cache in front of no model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from guardsearch import (
    Budget,
    BudgetExceeded,
    CachedModel,
    Completion,
    DictCache,
    FileCache,
    Message,
    Metered,
    ModelError,
    ModelRequest,
    ReplayMiss,
    ReplayModel,
    ScriptedModel,
    Usage,
    WrapperModel,
    max_cost,
    model_from_spec,
)
from guardsearch.models.base import TokenCounter, bound_prompt_tokens, estimate_prompt_tokens


def ask(text: str, seed: int = 0) -> ModelRequest:
    return ModelRequest(messages=(Message("user", text),), seed=seed)


class Uncounted:
    """A model that cannot count tokens (like an OpenAI endpoint), priced per token."""

    name = "uncounted"
    price_prompt_per_mtok = 2.0
    price_completion_per_mtok = 8.0

    async def complete(self, request: ModelRequest) -> Completion:
        return Completion(text="ok", usage=Usage(calls=1, prompt_tokens=1, completion_tokens=1))


class Slow:
    """Answers after a few yields; counts the calls it was paid for, per prompt."""

    name = "slow"

    def __init__(self, fail: set[str] | None = None) -> None:
        self.paid: dict[str, int] = {}
        self.fail = fail or set()

    async def complete(self, request: ModelRequest) -> Completion:
        text = request.messages[0].content
        self.paid[text] = self.paid.get(text, 0) + 1
        for _ in range(3):
            await asyncio.sleep(0)
        if text in self.fail:
            self.fail.discard(text)
            raise ModelError("connection reset")
        return Completion(text=f"answer to {text}", usage=Usage(calls=1, completion_tokens=2))


# WrapperModel


async def test_a_wrapper_passes_name_and_calls_through_to_its_inner_model() -> None:
    inner = ScriptedModel(["hi"], name="tiny")
    wrapper = WrapperModel(inner)
    assert wrapper.name == "tiny"
    assert (await wrapper.complete(ask("q"))).text == "hi"
    assert inner.calls == 1


def test_a_wrapper_counts_tokens_exactly_when_its_inner_model_does() -> None:
    request = ask("三 words 三")
    inner = ScriptedModel(["x"])
    for wrapper in (WrapperModel(inner), CachedModel(inner), Metered(inner)):
        assert isinstance(wrapper, TokenCounter)
        assert estimate_prompt_tokens(wrapper, request) == inner.count_tokens(request) == 3


def test_a_wrapper_of_a_model_that_cannot_count_gives_the_byte_bound() -> None:
    request = ask("三 words 三")
    assert estimate_prompt_tokens(WrapperModel(Uncounted()), request) == bound_prompt_tokens(
        request
    )


async def test_a_wrapper_passes_prices_through_so_metered_reserves_the_cost() -> None:
    inner = Uncounted()
    wrapped = CachedModel(WrapperModel(inner))
    assert (wrapped.price_prompt_per_mtok, wrapped.price_completion_per_mtok) == (2.0, 8.0)
    budget = Budget(max_cost(1e-9))  # less than one call's worst case
    with pytest.raises(BudgetExceeded):
        await Metered(wrapped, budget).complete(ask("q"))


# CachedModel over each cache kind


async def test_a_dict_cache_answers_a_repeated_request_without_the_model() -> None:
    inner = ScriptedModel(["one", "two"])
    cached = CachedModel(inner, DictCache())
    first = await cached.complete(ask("q"))
    again = await cached.complete(ask("q"))
    assert first == again and first.text == "one"
    assert again.usage.calls == 1  # a hit keeps the usage it was paid with
    assert inner.calls == 1 and (cached.hits, cached.misses) == (1, 1)


async def test_a_request_that_differs_in_any_setting_misses_the_cache() -> None:
    inner = ScriptedModel(["one", "two", "three"])
    cached = CachedModel(inner, DictCache())
    await cached.complete(ask("q"))
    assert (await cached.complete(ask("q", seed=1))).text == "two"
    assert (await cached.complete(ask("q").with_max_tokens(7))).text == "three"
    assert (cached.hits, cached.misses, len(cached.cache)) == (0, 3, 3)


async def test_a_file_cache_keeps_answers_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    first = CachedModel(ScriptedModel(["one"]), FileCache(path))
    paid = await first.complete(ask("q"))
    inner = ScriptedModel(["never"])
    later = CachedModel(inner, FileCache(path))  # a new process reads the same log
    assert await later.complete(ask("q")) == paid
    assert inner.calls == 0 and (later.hits, later.misses) == (1, 0)
    assert (await later.complete(ask("other"))).text == "never"
    assert (later.hits, later.misses) == (1, 1)


async def test_a_file_cache_record_holds_the_digest_request_and_completion(
    tmp_path: Path,
) -> None:
    path = tmp_path / "log.jsonl"
    request = ask("q")
    answer = await CachedModel(ScriptedModel(["one"]), FileCache(path)).complete(request)
    (record,) = [json.loads(line) for line in path.read_text().splitlines()]
    assert record["digest"] == request.digest()
    assert record["request"] == request.as_dict()
    assert Completion.from_dict(record["completion"]) == answer


# Paying once


async def test_identical_requests_in_flight_at_once_are_paid_once() -> None:
    inner = Slow()
    cached = CachedModel(inner, DictCache())
    answers = await asyncio.gather(*(cached.complete(ask("q")) for _ in range(4)))
    assert {a.text for a in answers} == {"answer to q"}
    assert inner.paid == {"q": 1} and (cached.hits, cached.misses) == (3, 1)
    assert not cached._inflight


async def test_a_failed_call_is_not_cached_the_next_caller_asks_again() -> None:
    inner = Slow(fail={"q"})
    cached = CachedModel(inner, DictCache())
    with pytest.raises(ModelError):
        await cached.complete(ask("q"))
    assert (await cached.complete(ask("q"))).text == "answer to q"
    assert inner.paid == {"q": 2} and (cached.hits, cached.misses, len(cached.cache)) == (0, 1, 1)


# Replay: a cache where a miss is an error


async def test_a_replay_miss_is_an_error_and_is_not_cached(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text("")
    replay = ReplayModel(path)
    for _ in range(2):
        with pytest.raises(ReplayMiss) as caught:
            await replay.complete(ask("q"))
        assert caught.value.digest == ask("q").digest()
    assert (replay.hits, replay.misses, len(replay.cache)) == (0, 0, 0)
    assert path.read_text() == ""


async def test_record_then_replay_through_the_documented_specs(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(["first", "second"]))
    log = tmp_path / "log.jsonl"
    recorder = model_from_spec(f"record:{log}::scripted:{answers}")
    recorded = [await recorder.complete(ask(q)) for q in ("a", "b", "a")]
    assert [c.text for c in recorded] == ["first", "second", "first"]
    replay = model_from_spec(f"replay:{log}")
    assert [await replay.complete(ask(q)) for q in ("a", "b")] == recorded[:2]
    with pytest.raises(ReplayMiss):
        await replay.complete(ask("c"))
