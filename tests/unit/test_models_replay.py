"""Replay logs: record answers by request digest (CachedModel over a FileCache), replay
them exactly (ReplayModel: a miss is an error)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guardsearch import (
    CachedModel,
    Completion,
    ConfigError,
    FileCache,
    Message,
    ModelError,
    ModelRequest,
    ReplayMiss,
    ReplayModel,
    ScriptedModel,
)


def ask(text: str) -> ModelRequest:
    return ModelRequest(messages=(Message("user", text),))


async def record(path: Path, answers: dict[str, str]) -> ScriptedModel:
    inner = ScriptedModel(lambda r: answers[r.messages[0].content])
    recorder = CachedModel(inner, FileCache(path))
    for question in answers:
        await recorder.complete(ask(question))
    return inner


async def test_a_replay_gives_the_recorded_completions_without_any_inner_model(
    tmp_path: Path,
) -> None:
    path = tmp_path / "log.jsonl"
    inner = await record(path, {"q1": "answer one", "q2": "answer two"})
    live = [await inner.complete(ask(q)) for q in ("q1", "q2")]
    calls_before = inner.calls
    replay = ReplayModel(path)
    replayed = [await replay.complete(ask(q)) for q in ("q1", "q2")]
    assert replayed == live
    assert inner.calls == calls_before
    assert (replay.hits, replay.misses) == (2, 0)


async def test_a_recorder_replays_known_requests_instead_of_paying_again(tmp_path: Path) -> None:
    inner = ScriptedModel(["fresh"], repeat_last=True)
    recorder = CachedModel(inner, FileCache(tmp_path / "log.jsonl"))
    await recorder.complete(ask("q"))
    await recorder.complete(ask("q"))
    assert inner.calls == 1
    assert (recorder.hits, recorder.misses) == (1, 1)


async def test_a_request_never_recorded_raises_replay_miss(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    await record(path, {"q1": "a"})
    with pytest.raises(ReplayMiss, match="no recorded response") as caught:
        await ReplayModel(path).complete(ask("something else"))
    assert isinstance(caught.value, ModelError)


async def test_a_request_that_differs_in_any_setting_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    await record(path, {"q1": "a"})
    with pytest.raises(ReplayMiss):
        await ReplayModel(path).complete(ask("q1").with_max_tokens(7))


async def test_each_answer_is_written_as_one_json_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    await record(path, {"q1": "a", "q2": "b"})
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["completion"]["text"] for r in records] == ["a", "b"]
    assert records[0]["digest"] == ask("q1").digest()


async def test_a_torn_last_line_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    await record(path, {"q1": "a", "q2": "b"})
    with path.open("a") as fh:
        fh.write('{"digest": "abc", "completion": {"te')
    replay = ReplayModel(path)
    assert len(replay.cache) == 2
    assert (await replay.complete(ask("q2"))).text == "b"


async def test_recording_after_a_torn_last_line_keeps_the_log_replayable(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    await record(path, {"q1": "a"})
    with path.open("a") as fh:
        fh.write('{"digest": "abc", "completion": {"te')  # the writer was killed here
    await record(path, {"q2": "b", "q3": "c"})  # a resumed run records more
    replay = ReplayModel(path)
    assert [(await replay.complete(ask(q))).text for q in ("q1", "q2", "q3")] == ["a", "b", "c"]


async def test_a_corrupt_middle_line_is_a_config_error_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    await record(path, {"q1": "a", "q2": "b"})
    first, second = path.read_text().splitlines()
    path.write_text(f"{first}\nnot json at all\n{second}\n")
    with pytest.raises(ConfigError, match=r"log\.jsonl:2: corrupt replay record"):
        ReplayModel(path)


def test_replaying_a_missing_log_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        ReplayModel(tmp_path / "absent.jsonl")


def test_a_replay_is_named_after_its_log_a_recorder_after_its_inner_model(
    tmp_path: Path,
) -> None:
    path = tmp_path / "log.jsonl"
    assert CachedModel(ScriptedModel([], name="tiny"), FileCache(path)).name == "tiny"
    path.write_text("")
    assert ReplayModel(path).name == "replay:log.jsonl"


async def test_a_torn_last_line_cut_inside_a_character_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    await record(path, {"q1": "a"})
    with path.open("ab") as fh:
        fh.write('{"digest": "abc", "completion": {"text": "é'.encode()[:-1])
    assert (await ReplayModel(path).complete(ask("q1"))).text == "a"


async def test_answers_with_unicode_line_separators_replay_exactly(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    answers = {"q1": "one\u2028two", "q2": "three\u2029four\x85five", "q3": "six"}
    await record(path, answers)
    replay = ReplayModel(path)
    assert [(await replay.complete(ask(q))).text for q in answers] == list(answers.values())


async def test_an_answer_with_an_unpaired_surrogate_is_recorded_and_replayed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "log.jsonl"
    answers = {"q1": "half an emoji \ud83d", "q2": "héllo"}
    await record(path, answers)
    replay = ReplayModel(path)
    assert [(await replay.complete(ask(q))).text for q in answers] == list(answers.values())


def test_a_recorder_counts_tokens_with_its_inner_model_when_it_can(tmp_path: Path) -> None:
    from guardsearch.models.base import TokenCounter, bound_prompt_tokens, estimate_prompt_tokens

    request = ask("三 words 三")
    inner = ScriptedModel(["x"])
    recorder = CachedModel(inner, FileCache(tmp_path / "log.jsonl"))
    assert isinstance(recorder, TokenCounter)
    assert estimate_prompt_tokens(recorder, request) == inner.count_tokens(request) == 3

    class Uncounted:
        name = "uncounted"

        async def complete(self, request: ModelRequest) -> Completion:
            raise AssertionError("not called")

    uncounted = CachedModel(Uncounted(), FileCache(tmp_path / "other.jsonl"))
    bound = bound_prompt_tokens(request)
    assert estimate_prompt_tokens(uncounted, request) == bound
    assert bound >= len("三 words 三".encode()) + 8  # bytes + template overhead
