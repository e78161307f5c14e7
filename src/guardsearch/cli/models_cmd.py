"""`guardsearch models`: which backends exist and whether the embedded model is installed."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from guardsearch.cli.output import out, print_json
from guardsearch.models.spec import default_spec


def backends() -> list[dict[str, str]]:
    return [
        {
            "spec": "embedded",
            "backend": "llamacpp",
            "about": "the shipped GGUF model on the CPU, no network, no key (default)",
        },
        {"spec": "gguf:/path/model.gguf", "backend": "llamacpp", "about": "any local GGUF file"},
        {
            "spec": "openai:URL#MODEL",
            "backend": "openai",
            "about": "any OpenAI-compatible server (vLLM, Ollama, llama.cpp server, OpenAI); "
            "key from $OPENAI_API_KEY",
        },
        {"spec": "replay:FILE", "backend": "replay", "about": "replay a recorded log exactly"},
        {"spec": "record:FILE::SPEC", "backend": "replay", "about": "record SPEC's answers"},
        {
            "spec": "scripted:FILE.json",
            "backend": "scripted",
            "about": "answers from a JSON list of strings",
        },
    ]


def models(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """List model backends and the embedded model's status."""
    from guardsearch.models.embedded import embedded_status

    info: dict[str, Any] = {
        "default": default_spec(),
        "backends": backends(),
        "embedded": embedded_status(),
    }
    try:
        import llama_cpp

        info["llama_cpp_python"] = llama_cpp.__version__
    except ImportError:
        info["llama_cpp_python"] = None
    if as_json:
        print_json(info)
        return
    emb = info["embedded"]
    out.print(f"default model: {info['default']}")
    out.print(
        f"embedded: {emb.get('name')} installed={emb.get('installed')} "
        f"assembled={emb.get('assembled')} size={emb.get('size')} path={emb.get('path')}"
    )
    out.print(f"llama-cpp-python: {info['llama_cpp_python'] or 'not installed'}")
    for b in info["backends"]:
        out.print(f"  {b['spec']:<24} {b['backend']:<9} {b['about']}")
