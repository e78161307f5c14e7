"""The llama-cpp-python server launcher decodes as the embedded backend does (no model run)."""

from __future__ import annotations

import pytest

from guardsearch.models import llama_server
from guardsearch.models.llamacpp import available_cpus


def test_the_server_gets_every_usable_cpu_unless_told_otherwise() -> None:
    cpus = str(available_cpus())
    assert llama_server.server_args(["--model", "m.gguf"]) == [
        "--model",
        "m.gguf",
        "--n_threads",
        cpus,
        "--n_threads_batch",
        cpus,
    ]
    given = ["--model", "m.gguf", "--n_threads", "1", "--n_threads_batch", "3"]
    assert llama_server.server_args(given) == given


def test_models_the_server_builds_sample_with_the_lazy_grammar(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    import llama_cpp.server.model as server_model

    original = llama_cpp.Llama
    monkeypatch.setattr(llama_cpp, "Llama", original)  # restored after the test
    seen: list[object] = []
    # No model is loaded: a bare object that frees nothing.
    monkeypatch.setattr(original, "__init__", lambda self, *a, **k: None)
    monkeypatch.setattr(original, "__del__", lambda self: None)
    monkeypatch.setattr(
        "guardsearch.models.llamacpp._use_lazy_grammar", lambda llm: seen.append(llm)
    )
    llama_server.serve_lazy_grammars()
    llama_server.serve_lazy_grammars()  # a second call does not wrap twice
    served = server_model.llama_cpp.Llama  # what the server's loader calls
    assert issubclass(served, original) and served.__mro__[1] is original
    llm = served(model_path="m.gguf")
    assert seen == [llm]
    del llm
    seen.clear()  # gone while __del__ is still the harmless one


def test_the_server_defaults_to_the_embedded_repeat_penalty(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("llama_cpp.server")
    from llama_cpp.server import types

    chat = types.CreateChatCompletionRequest
    requests = (types.CreateCompletionRequest, chat)
    for request in requests:  # restored after the test
        field = request.model_fields["repeat_penalty"]
        monkeypatch.setattr(field, "default", field.default)
    try:
        llama_server.serve_repeat_penalty(1.0)
        message = {"role": "user", "content": "hi"}
        assert chat(messages=[message]).repeat_penalty == 1.0
        assert chat(messages=[message], repeat_penalty=1.3).repeat_penalty == 1.3
    finally:
        monkeypatch.undo()
        for request in requests:
            request.model_rebuild(force=True)
    assert chat(messages=[message]).repeat_penalty == 1.1
    assert types.CreateCompletionRequest(prompt="hi").repeat_penalty == 1.1


def test_the_launcher_needs_a_model() -> None:
    assert llama_server.main(["--port", "8765"]) == 2
