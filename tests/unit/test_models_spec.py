"""Model specs: one string picks a backend; a bad one says which forms exist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guardsearch import (
    CachedModel,
    ConfigError,
    FileCache,
    OpenAIModel,
    ReplayModel,
    ScriptedModel,
    model_from_spec,
)
from guardsearch.models.spec import DEFAULT_SPEC, OPENAI_DEFAULT_URL, default_spec


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(["yes"]))
    return path


def test_an_openai_spec_names_the_url_and_the_model() -> None:
    model = model_from_spec("openai:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-7B-Instruct")
    assert isinstance(model, OpenAIModel)
    assert model.base_url == "http://127.0.0.1:8000/v1"
    assert model.model == "Qwen/Qwen2.5-7B-Instruct"


def test_an_openai_spec_without_url_uses_api_openai_com() -> None:
    model = model_from_spec("openai:#gpt-4o-mini")
    assert isinstance(model, OpenAIModel)
    assert (model.base_url, model.model) == (OPENAI_DEFAULT_URL, "gpt-4o-mini")


def test_an_openai_spec_without_model_name_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="needs a model name"):
        model_from_spec("openai:http://127.0.0.1:8000/v1")


def test_a_scripted_spec_answers_from_a_json_file(answers: Path) -> None:
    model = model_from_spec(f"scripted:{answers}")
    assert isinstance(model, ScriptedModel)
    assert model.repeat_last


async def test_a_scripted_spec_may_answer_slowly(answers: Path) -> None:
    import time

    from guardsearch.core.messages import Message, ModelRequest

    model = model_from_spec(f"scripted:{answers}?delay=0.2")
    assert isinstance(model, ScriptedModel) and model.delay_s == 0.2
    started = time.monotonic()
    await model.complete(ModelRequest(messages=(Message("user", "hi"),)))
    assert time.monotonic() - started >= 0.2
    with pytest.raises(ConfigError, match=r"\?delay=SECONDS"):
        model_from_spec(f"scripted:{answers}?delay=soon")


def test_a_replay_spec_replays_a_log(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("")
    model = model_from_spec(f"replay:{log}")
    assert isinstance(model, ReplayModel)
    assert model.name == "replay:log.jsonl"


def test_a_replay_spec_without_a_file_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="replay:FILE"):
        model_from_spec("replay:")


def test_a_record_spec_wraps_the_inner_spec(tmp_path: Path, answers: Path) -> None:
    model = model_from_spec(f"record:{tmp_path / 'log.jsonl'}::scripted:{answers}")
    assert isinstance(model, CachedModel) and not isinstance(model, ReplayModel)
    assert isinstance(model.inner, ScriptedModel)
    assert isinstance(model.cache, FileCache) and model.cache.path == tmp_path / "log.jsonl"


@pytest.mark.parametrize("spec", ["record:log.jsonl", "record:::scripted:x.json", "record:log::"])
def test_a_malformed_record_spec_is_a_config_error(spec: str) -> None:
    with pytest.raises(ConfigError, match=r"record:FILE::SPEC"):
        model_from_spec(spec)


def test_an_unknown_spec_is_a_config_error_listing_the_valid_forms() -> None:
    with pytest.raises(ConfigError) as caught:
        model_from_spec("claude:opus")
    message = str(caught.value)
    for form in ("embedded", "gguf:PATH", "openai:URL#MODEL", "replay:FILE", "record:FILE::SPEC"):
        assert form in message
    assert "scripted:FILE" in message


def test_surrounding_whitespace_in_a_spec_is_ignored() -> None:
    assert isinstance(model_from_spec("  openai:#m  "), OpenAIModel)


def test_the_default_spec_is_the_embedded_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GUARDSEARCH_MODEL", raising=False)
    assert default_spec() == DEFAULT_SPEC == "embedded"


def test_guardsearch_model_sets_the_default_spec(
    monkeypatch: pytest.MonkeyPatch, answers: Path
) -> None:
    monkeypatch.setenv("GUARDSEARCH_MODEL", f"scripted:{answers}")
    assert isinstance(model_from_spec(), ScriptedModel)
