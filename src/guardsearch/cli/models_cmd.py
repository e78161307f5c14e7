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
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Check now, in a child process, which llama.cpp settings decode on this CPU "
            "(assembles the embedded model if needed) and record the choice.",
        ),
    ] = False,
) -> None:
    """List model backends, the embedded model's status and its llama.cpp settings."""
    from guardsearch.models.embedded import embedded_status

    info: dict[str, Any] = {
        "default": default_spec(),
        "backends": backends(),
        "embedded": embedded_status(),
    }
    info["embedded"]["llama_settings"] = _llama_settings(info["embedded"], check=check)
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
    settings = emb["llama_settings"]
    if settings is not None:
        flag = {True: "on", False: "off", None: "not checked"}[settings["extra_bufts"]]
        out.print(
            f"llama.cpp extra buffer types: {flag} ({settings['source']}: {settings['reason']})"
        )
    for b in info["backends"]:
        out.print(f"  {b['spec']:<24} {b['backend']:<9} {b['about']}")


def _llama_settings(embedded: dict[str, Any], *, check: bool) -> dict[str, Any] | None:
    """The llama.cpp settings the embedded model loads with here, and why (cpu_check)."""
    from pathlib import Path

    from guardsearch.models import cpu_check

    if not embedded.get("installed"):
        return None
    path = Path(embedded["path"])
    if check:
        from guardsearch.models.embedded import embedded_model_path

        path = embedded_model_path()
        return cpu_check.check_settings(path).as_dict() | {
            "checked": True,
            "cpu": cpu_check.cpu_summary(),
        }
    return cpu_check.settings_status(path) | {"cpu": cpu_check.cpu_summary()}
