"""The real embedded model: grammar-constrained JSON, KV-cache reuse, token counting."""

from __future__ import annotations

import asyncio
import ctypes
import json
import math
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from guardsearch.core.messages import Message, ModelRequest
from guardsearch.models.base import Model, TokenCounter

pytestmark = pytest.mark.model

llamacpp = pytest.importorskip("guardsearch.models.llamacpp")
pytest.importorskip("llama_cpp")

SYSTEM = "You are a precise assistant. Answer only with JSON matching the requested shape."

STRING_FIELD = {
    "type": "object",
    "properties": {"answer": {"type": "string", "maxLength": 80}},
    "required": ["answer"],
    "additionalProperties": False,
}
STRING_LIST = {
    "type": "array",
    "items": {"type": "string", "maxLength": 30},
    "minItems": 2,
    "maxItems": 4,
}
SENTIMENT = {"type": "string", "enum": ["positive", "negative", "neutral"]}
COUNT = {
    "type": "object",
    "properties": {"count": {"type": "integer"}},
    "required": ["count"],
}
# No explicit bounds: exercises the default maxLength / maxItems the backend adds.
BOOK = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "author": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "born": {"type": "integer"}},
            "required": ["name", "born"],
        },
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
    },
    "required": ["title", "author", "tags"],
}

CASES: list[tuple[str, dict[str, Any]]] = [
    ("What is the capital of France?", STRING_FIELD),
    ("Write a Python function that adds two numbers, as source code.", STRING_FIELD),
    ("Explain a mutex in one sentence.", STRING_FIELD),
    ('Quote this line exactly: she said "tab\there" and left', STRING_FIELD),
    ("List some primary colors.", STRING_LIST),
    ("Name a few sorting algorithms.", STRING_LIST),
    ("Give shell commands to list files, one per item, with a newline in each.", STRING_LIST),
    ("Name fruits that are yellow.", STRING_LIST),
    ("Sentiment of: 'I love this library, it works great!'", SENTIMENT),
    ("Sentiment of: 'The build failed again and nobody cares.'", SENTIMENT),
    ("Sentiment of: 'The meeting is at 3pm.'", SENTIMENT),
    ("Sentiment of: 'Worst purchase ever.'", SENTIMENT),
    ("How many legs does a spider have?", COUNT),
    ("How many days are in a leap year?", COUNT),
    ("Count the words in: 'the quick brown fox'", COUNT),
    ("How many continents are there?", COUNT),
    ("Describe the book 'Dune'.", BOOK),
    ("Describe the book 'Pride and Prejudice' briefly.", BOOK),
    ("Describe a famous programming book.", BOOK),
    ("Describe the book 'The Hobbit'.", BOOK),
]


@pytest.fixture(scope="module")
def model() -> Iterator[Any]:
    """One model per module: loading weights is the slow part."""
    from guardsearch.models.embedded import embedded_model_path

    yield llamacpp.LlamaCppModel(embedded_model_path(), n_ctx=2048)


def _request(prompt: str, schema: dict[str, Any] | None, max_tokens: int = 160) -> ModelRequest:
    shape = f"\nJSON schema: {json.dumps(schema)}" if schema else ""
    return ModelRequest(
        messages=(Message("system", SYSTEM), Message("user", prompt + shape)),
        json_schema=schema,
        max_tokens=max_tokens,
    )


def test_implements_the_protocols(model: Any) -> None:
    assert isinstance(model, Model) and isinstance(model, TokenCounter)
    assert model.name == "qwen2.5-coder-0.5b-instruct-q4_k_m"


async def test_grammar_gives_schema_valid_json(model: Any) -> None:
    valid, failures = 0, []
    for prompt, schema in CASES:
        completion = await model.complete(_request(prompt, schema))
        try:
            # json.loads is strict: raw control characters inside strings are rejected.
            jsonschema.validate(json.loads(completion.text), schema)
            valid += 1
        except (ValueError, jsonschema.ValidationError) as exc:
            failures.append((prompt, completion.text, completion.finish_reason, str(exc)[:200]))
    assert valid >= 19, failures


async def test_cached_prefix_is_reported(model: Any) -> None:
    prefix = "Context: " + " ".join(
        f"fact {i} is that item {i} costs {i * 3} coins." for i in range(30)
    )
    llm_evals: list[int] = []
    first = await model.complete(_request(prefix + "\nQuestion: what does item 4 cost?", None, 8))
    llm = model._llm
    original_eval = llm.eval

    def counting_eval(tokens: Any) -> None:
        llm_evals.append(len(tokens))
        original_eval(tokens)

    llm.eval = counting_eval
    try:
        second = await model.complete(
            _request(prefix + "\nQuestion: what does item 7 cost?", None, 8)
        )
    finally:
        del llm.eval
    assert first.usage.prompt_tokens > 300
    assert second.usage.cached_prompt_tokens > 300
    # The reported reuse is exactly what llama.cpp skipped: its first eval batch is
    # the part of the prompt it really had to evaluate.
    assert llm_evals[0] == second.usage.prompt_tokens - second.usage.cached_prompt_tokens


async def test_count_tokens_bounds_the_prompt(model: Any) -> None:
    for prompt, schema in CASES[::5]:
        request = _request(prompt, schema, 4)
        counted = model.count_tokens(request)
        completion = await model.complete(request)
        assert counted >= completion.usage.prompt_tokens
        assert counted == completion.usage.prompt_tokens  # exact with the GGUF template


async def test_concurrent_calls_are_serialized(model: Any) -> None:
    requests = [_request(f"Say the number {i}.", COUNT, 12) for i in range(3)]
    completions = await asyncio.gather(*(model.complete(r) for r in requests))
    for completion in completions:
        jsonschema.validate(json.loads(completion.text), COUNT)
        assert completion.latency_s > 0 and completion.model == model.name


def _grammar_allows(llm: Any, gbnf: str, prefix: str, text: str) -> bool:
    """Whether llama.cpp's grammar engine lets the single token `text` follow `prefix`."""
    import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(llm._model.vocab, gbnf.encode(), b"root")
    assert sampler
    try:
        for token in llm.tokenize(prefix.encode(), add_bos=False, special=False):
            llama_cpp.llama_sampler_accept(sampler, token)
        (token,) = llm.tokenize(text.encode(), add_bos=False, special=False)
        data = (llama_cpp.llama_token_data * 1)(llama_cpp.llama_token_data(token, 0.0, 0.0))
        candidates = llama_cpp.llama_token_data_array(data=data, size=1, selected=-1, sorted=False)
        llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates))
        return not math.isinf(data[0].logit)
    finally:
        llama_cpp.llama_sampler_free(sampler)


def test_grammar_engine_rejects_raw_control_characters_and_long_strings(model: Any) -> None:
    model.count_tokens(_request("load", None))
    llm = model._llm
    gbnf = llamacpp.schema_to_gbnf({"type": "object", "properties": {"s": {"type": "string"}}})
    for control in ("\n", "\t"):
        assert not _grammar_allows(llm, gbnf, '{"s": "a', control)
    assert _grammar_allows(llm, gbnf, '{"s": "a', "b")
    assert _grammar_allows(llm, gbnf, '{"s": "a', "\\")  # the start of an escape
    short = llamacpp.schema_to_gbnf({"type": "string", "maxLength": 3})
    assert not _grammar_allows(llm, short, '"abc', "d")
    assert _grammar_allows(llm, short, '"abc', '"')


async def test_lazy_grammar_matches_eager_grammar() -> None:
    from guardsearch.models.embedded import embedded_model_path

    # Both start cold on every call: cache reuse alone can flip a greedy near-tie.
    lazy, eager = (
        llamacpp.LlamaCppModel(
            embedded_model_path(), n_ctx=1024, lazy_grammar=flag, prefix_cache=False
        )
        for flag in (True, False)
    )
    for prompt, schema in (CASES[3], CASES[6], CASES[12]):
        request = _request(prompt, schema)
        assert (await lazy.complete(request)).text == (await eager.complete(request)).text


async def test_prefix_cache_can_be_switched_off() -> None:
    from guardsearch.models.embedded import embedded_model_path

    cold = llamacpp.LlamaCppModel(embedded_model_path(), n_ctx=1024, prefix_cache=False)
    request = _request("Say hi.", None, 4)
    await cold.complete(request)
    assert (await cold.complete(request)).usage.cached_prompt_tokens == 0


def test_grammar_excludes_control_characters_and_bounds_strings() -> None:
    gbnf = llamacpp.schema_to_gbnf({"type": "object", "properties": {"s": {"type": "string"}}})
    char_rule = next(line for line in gbnf.splitlines() if line.startswith("char ::="))
    assert r"\x00-\x1F" in char_rule
    # maxLength 200 unrolls into 200 nested optional chars.
    s_rule = next(line for line in gbnf.splitlines() if line.startswith("s ::="))
    assert s_rule.count("char") == llamacpp.DEFAULT_MAX_LENGTH


def test_bound_schema_adds_defaults_and_keeps_bounds() -> None:
    bounded = llamacpp.bound_schema(
        {
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "string", "maxLength": 5},
                "c": {"type": "array", "items": {"type": ["string", "null"]}},
                "d": {"type": "string", "enum": ["x"]},
            },
            "$defs": {"e": {"type": "string", "minLength": 300}},
        }
    )
    props = bounded["properties"]
    assert props["a"]["maxLength"] == 200 and props["b"]["maxLength"] == 5
    assert props["c"]["maxItems"] == 16
    assert props["c"]["items"] == {
        "anyOf": [{"type": "string", "maxLength": 200}, {"type": "null"}]
    }
    assert "maxLength" not in props["d"]
    assert bounded["$defs"]["e"]["maxLength"] == 300


def test_reused_prefix_mirrors_llama_cpp() -> None:
    assert llamacpp.reused_prefix([], [1, 2, 3], fresh_logits=False) == 0
    assert llamacpp.reused_prefix([1, 2, 9, 9], [1, 2, 3], fresh_logits=True) == 2
    # Whole prompt cached: the last token is replayed to refresh the logits...
    assert llamacpp.reused_prefix([1, 2, 3, 4], [1, 2, 3], fresh_logits=True) == 2
    # ...unless the cache is exactly the prompt with live logits.
    assert llamacpp.reused_prefix([1, 2, 3], [1, 2, 3], fresh_logits=True) == 3
