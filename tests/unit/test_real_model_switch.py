"""Unit tests cannot reach a real model: tests/conftest.py switches real backends off."""

from __future__ import annotations

import pytest

from guardsearch import ConfigError, Message, ModelRequest, OpenAIModel, allow_real_models
from guardsearch.models.base import ensure_real_models_allowed

REQUEST = ModelRequest(messages=(Message("user", "hello"),))


async def test_a_real_openai_call_raises_config_error_in_unit_tests() -> None:
    model = OpenAIModel(base_url="http://127.0.0.1:9/v1", model="real", max_attempts=1)
    with pytest.raises(ConfigError, match="real models are disabled"):
        await model.complete(REQUEST)


def test_the_error_names_the_model_and_how_to_mark_a_real_model_test() -> None:
    with pytest.raises(ConfigError) as caught:
        ensure_real_models_allowed("gpt-x")
    assert "gpt-x" in str(caught.value)
    assert "pytest.mark.model" in str(caught.value)


async def test_a_llamacpp_call_raises_config_error_in_unit_tests() -> None:
    llamacpp = pytest.importorskip("guardsearch.models.llamacpp")
    model = llamacpp.LlamaCppModel("/nonexistent/model.gguf")
    with pytest.raises(ConfigError, match="real models are disabled"):
        await model.complete(REQUEST)


def test_allow_real_models_switches_the_guard_on_and_off() -> None:
    allow_real_models(True)
    ensure_real_models_allowed("anything")  # does not raise
    allow_real_models(False)
    with pytest.raises(ConfigError):
        ensure_real_models_allowed("anything")


@pytest.mark.model
def test_tests_marked_model_may_reach_real_models() -> None:
    ensure_real_models_allowed("embedded")  # does not raise
