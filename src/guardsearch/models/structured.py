"""How an OpenAI-compatible server is asked for JSON that fits a schema: one mode per server.

Servers offer constrained output in different request fields:

json_schema   `response_format: {"type": "json_schema", ...}` (OpenAI, vLLM, Ollama,
              llama.cpp's llama-server)
grammar       a top-level GBNF `grammar`, written here exactly as the embedded backend
              writes it (string and list bounds, each step of a `uniqueItems` enum at
              most once); llama.cpp servers, llama-cpp-python's first among them (it
              refuses `json_schema`); needs llama-cpp-python installed here
json_object   `response_format: {"type": "json_object", "schema": ...}` (llama-cpp-python's
              server, which turns the schema into its own grammar: no `uniqueItems`)
guided_json   a top-level `guided_json` schema (vLLM's guided decoding, older releases)
none          nothing: the prompt asks for JSON and the parse guard (with its repairs)
              checks it

Why `grammar` before `json_object`: on llama-cpp-python's server the two decode
differently. Game of 24 "4 5 6 10" (astar) took 6 calls with `grammar` (the embedded
backend's calls, tokens and answer) and 39 with `json_object`, whose grammar ignores
`uniqueItems` (docs/models.md).

The mode is found by a cheap probe on first use (`PROBE_SCHEMA`, a few tokens), cached
per server URL and model in `$GUARDSEARCH_HOME/servers.json`, and can be forced with the
spec option `?structured=MODE` or `GUARDSEARCH_STRUCTURED=MODE` (the spec wins).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from guardsearch.core.errors import ConfigError
from guardsearch.core.messages import Message, ModelRequest

MODES = ("json_schema", "grammar", "json_object", "guided_json", "none")
STRUCTURED_ENV = "GUARDSEARCH_STRUCTURED"
CACHE_FILE = "servers.json"

# The probe asks for something an unconstrained model would not answer with JSON, so a
# server that silently ignores the field is told apart from one that honours it.
PROBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"word": {"type": "string", "maxLength": 12}},
    "required": ["word"],
    "additionalProperties": False,
}
PROBE_REQUEST = ModelRequest(
    messages=(Message("user", "Say hello in one word."),),
    max_tokens=24,
    json_schema=PROBE_SCHEMA,
)

# Words in an error body that say which request field a server refused, per mode.
_FIELD_WORDS = {
    "json_schema": ("response_format", "json_schema"),
    "json_object": ("response_format", "json_object"),
    "guided_json": ("guided_json", "extra_forbidden", "extra inputs", "unrecognized"),
    "grammar": ("grammar",),
    "none": (),
}


def parse_mode(value: str, *, origin: str) -> str | None:
    """A forced mode from a spec option or the env var; `auto` (or empty) is None."""
    value = value.strip().lower()
    if value in ("", "auto"):
        return None
    if value not in MODES:
        raise ConfigError(
            f"bad structured-output mode {value!r} in {origin}; "
            f"use auto or one of {', '.join(MODES)}"
        )
    return value


def forced_mode(spec_value: str | None) -> tuple[str | None, str]:
    """The forced mode and where it came from: the spec option, then the env var."""
    if spec_value is not None:
        return parse_mode(spec_value, origin="model spec option structured="), "spec"
    env = os.environ.get(STRUCTURED_ENV)
    if env:
        return parse_mode(env, origin=STRUCTURED_ENV), "env"
    return None, ""


def candidates(after: str | None = None) -> list[str]:
    """The modes to try, in order, after `after` (all of them when None)."""
    modes = [m for m in MODES if m != "grammar" or _grammar_available()]
    if after is None:
        return modes
    return modes[modes.index(after) + 1 :] if after in modes else ["none"]


def _grammar_available() -> bool:
    try:
        import llama_cpp.llama_grammar  # noqa: F401
    except ImportError:
        return False
    return True


def shape(payload: dict[str, Any], request: ModelRequest, mode: str) -> dict[str, Any]:
    """`payload` with the schema of `request` put where `mode` wants it."""
    schema = dict(request.json_schema or {})
    if mode == "json_schema":
        payload["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "output", "schema": schema},
        }
    elif mode == "json_object":
        # llama-cpp-python turns the schema into a grammar: bound its free strings and
        # lists as the embedded backend does, so a looping small model is cut off.
        from guardsearch.models.llamacpp import bound_schema

        payload["response_format"] = {"type": "json_object", "schema": bound_schema(schema)}
    elif mode == "guided_json":
        payload["guided_json"] = schema
    elif mode == "grammar":
        from guardsearch.models.llamacpp import schema_to_gbnf

        payload["grammar"] = schema_to_gbnf(schema)
    elif not any("json" in m["content"].lower() for m in payload["messages"]):
        # Unconstrained: the prompt must at least ask for the JSON the guard will parse.
        payload["messages"].append(
            {
                "role": "user",
                "content": "Reply with one JSON value only, valid against this JSON Schema: "
                + json.dumps(schema),
            }
        )
    return payload


def refused_field(mode: str, status: int, body: str) -> bool:
    """Did a server refuse the request field `mode` uses (terminal for that mode)?

    Servers report an unknown or unsupported field as a 400 or 422, and some (llama-cpp-
    python's server: `response_format.type: Input should be 'text' or 'json_object'`) as a
    500; the body names the field either way.
    """
    if status not in (400, 404, 415, 422, 500, 501) or mode == "none":
        return False
    text = body.lower()
    return any(word in text for word in _FIELD_WORDS[mode])


def honoured(text: str) -> bool:
    """Is a probe's answer JSON of the probe schema (so the server applied the constraint)?"""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and isinstance(value.get("word"), str) and len(value) == 1


def cache_key(base_url: str, model: str) -> str:
    return f"{base_url.rstrip('/')}#{model}"


def load_cached(key: str) -> dict[str, Any] | None:
    """The recorded negotiation for `key`, or None (a damaged cache file counts as empty)."""
    from guardsearch.paths import home

    path = home() / CACHE_FILE
    try:
        entry = json.loads(path.read_text()).get(key)
    except (OSError, ValueError, AttributeError):
        return None
    return entry if isinstance(entry, dict) and entry.get("mode") in MODES else None


def store_cached(key: str, entry: Mapping[str, Any]) -> None:
    """Record a negotiation; a cache that cannot be written only costs a probe next time."""
    from guardsearch.paths import subdir

    try:
        path = subdir(".") / CACHE_FILE
        try:
            data = json.loads(path.read_text())
            data = data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            data = {}
        data[key] = dict(entry)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
        tmp.replace(path)
    except (OSError, ConfigError):
        pass
