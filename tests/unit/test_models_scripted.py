"""ScriptedModel: the shipped test double answers from a list or a function."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guardsearch import (
    Completion,
    ConfigError,
    Message,
    Model,
    ModelError,
    ModelRequest,
    ScriptedModel,
    Usage,
)
from guardsearch.models.scripted import scripted_from_file


def ask(text: str = "question", max_tokens: int = 512) -> ModelRequest:
    return ModelRequest(messages=(Message("user", text),), max_tokens=max_tokens)


def test_a_scripted_model_is_a_model() -> None:
    assert isinstance(ScriptedModel([]), Model)


async def test_a_list_is_answered_in_order() -> None:
    model = ScriptedModel(["one", "two"])
    assert [(await model.complete(ask())).text for _ in range(2)] == ["one", "two"]


async def test_every_request_is_kept_for_inspection() -> None:
    model = ScriptedModel(["a", "b"])
    await model.complete(ask("first"))
    await model.complete(ask("second"))
    assert [r.messages[0].content for r in model.requests] == ["first", "second"]
    assert model.calls == 2


async def test_usage_counts_words_as_tokens() -> None:
    completion = await ScriptedModel(["three word answer"]).complete(ask("a b c d"))
    assert completion.usage == Usage(calls=1, prompt_tokens=4, completion_tokens=3)


async def test_a_function_script_answers_from_the_request() -> None:
    model = ScriptedModel(lambda request: request.messages[-1].content.upper())
    assert (await model.complete(ask("shout"))).text == "SHOUT"


async def test_an_async_function_script_is_awaited() -> None:
    async def answer(request: ModelRequest) -> str:
        return "later"

    assert (await ScriptedModel(answer).complete(ask())).text == "later"


async def test_an_exception_in_the_script_is_raised() -> None:
    model = ScriptedModel([TimeoutError("slow backend"), "ok"])
    with pytest.raises(TimeoutError, match="slow backend"):
        await model.complete(ask())
    assert (await model.complete(ask())).text == "ok"


async def test_a_completion_in_the_script_is_returned_as_is() -> None:
    scripted = Completion(text="hi", usage=Usage(calls=1, prompt_tokens=9), finish_reason="length")
    assert await ScriptedModel([scripted]).complete(ask()) is scripted


async def test_repeat_last_repeats_the_final_answer() -> None:
    model = ScriptedModel(["first", "last"], repeat_last=True)
    texts = [(await model.complete(ask())).text for _ in range(4)]
    assert texts == ["first", "last", "last", "last"]


async def test_running_out_of_answers_is_a_model_error() -> None:
    model = ScriptedModel(["only"])
    await model.complete(ask())
    with pytest.raises(ModelError, match="ran out of answers after 1"):
        await model.complete(ask())


async def test_max_tokens_is_honoured_like_a_real_backend() -> None:
    completion = await ScriptedModel(["one two three four"]).complete(ask(max_tokens=2))
    assert completion.text == "one two"
    assert completion.usage.completion_tokens == 2


async def test_answers_can_come_from_a_json_file(tmp_path: Path) -> None:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(["a", "b"]))
    model = scripted_from_file(str(path))
    texts = [(await model.complete(ask())).text for _ in range(3)]
    assert texts == ["a", "b", "b"]


def test_an_answers_file_that_is_not_a_list_of_strings_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"a": 1}))
    with pytest.raises(ConfigError, match="list of strings"):
        scripted_from_file(str(path))


def test_a_missing_answers_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read scripted answers"):
        scripted_from_file(str(tmp_path / "absent.json"))
