"""The attributes of model-call and guard-verdict spans, from their events.

Model calls follow the OpenTelemetry GenAI semantic conventions (inference spans:
`gen_ai.operation.name`, `gen_ai.provider.name` and the older `gen_ai.system`,
`gen_ai.request.*`, `gen_ai.response.*`, `gen_ai.usage.*`; prompts and completions as
`gen_ai.input.messages` / `gen_ai.output.messages` JSON only when content capture is on);
what the conventions do not cover is under `guardsearch.*`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

Attributes = dict[str, Any]

OPERATION = "chat"  # every call is a list of messages in, one message out


def scalar(value: Any) -> Any:
    """`value` as an attribute value (str, bool, int, float), or None to leave it out."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


def flat(prefix: str, data: Mapping[str, Any], skip: tuple[str, ...] = ()) -> Attributes:
    """`data`'s values as `prefix.key` attributes (nested values as JSON; None left out)."""
    out: Attributes = {}
    for key, value in data.items():
        if key in skip:
            continue
        shown = scalar(value)
        if shown is not None:
            out[f"{prefix}.{key}"] = shown
    return out


def model_call(
    data: Mapping[str, Any], step: str, node: str, reserved: Mapping[str, Any]
) -> Attributes:
    """A `model_call` (or `model_error`) event's span attributes; `reserved` is what
    its budget reservation and reconciliation said (prompt estimate, grant, refund)."""
    model = str(data.get("model", ""))
    provider = str(data.get("provider", "")) or "unknown"
    attrs: Attributes = {
        "gen_ai.operation.name": OPERATION,
        "gen_ai.provider.name": provider,
        "gen_ai.system": provider,
        "gen_ai.request.model": model,
        "gen_ai.output.type": "json" if data.get("json") else "text",
    }
    for key, name, kind in (
        ("temperature", "gen_ai.request.temperature", float),
        ("max_tokens", "gen_ai.request.max_tokens", int),
        ("seed", "gen_ai.request.seed", int),
    ):
        if data.get(key) is not None:
            attrs[name] = kind(data[key])
    if "prompt_tokens" in data:  # a call that answered
        attrs["gen_ai.usage.input_tokens"] = int(data["prompt_tokens"])
        attrs["gen_ai.usage.output_tokens"] = int(data.get("completion_tokens", 0))
        if data.get("cached_prompt_tokens"):
            attrs["gen_ai.usage.cache_read.input_tokens"] = int(data["cached_prompt_tokens"])
        attrs["gen_ai.response.finish_reasons"] = (str(data.get("finish_reason", "stop")),)
    if step:
        attrs["guardsearch.step"] = step
    if node:
        attrs["guardsearch.node.id"] = node
    for key in ("rung", "start", "role", "escalated"):
        if data.get(key) is not None:
            attrs[f"guardsearch.ladder.{key}"] = scalar(data[key])
    attrs.update(flat("guardsearch.budget", reserved))
    if "messages" in data:
        attrs.update(content(data))
    return attrs


def content(data: Mapping[str, Any]) -> Attributes:
    """The prompt and completion in the conventions' message shape (a JSON string each)."""
    messages = [
        {
            "role": m.get("role", "user"),
            "parts": [{"type": "text", "content": m.get("content", "")}],
        }
        for m in data.get("messages", [])
    ]
    out: Attributes = {"gen_ai.input.messages": json.dumps(messages, ensure_ascii=False)}
    if "text" in data:
        answer = {
            "role": "assistant",
            "parts": [_text(data["text"])],
            "finish_reason": data.get("finish_reason", "stop"),
        }
        out["gen_ai.output.messages"] = json.dumps([answer], ensure_ascii=False)
    return out


def _text(content: str) -> dict[str, str]:
    return {"type": "text", "content": content}


def verdict(data: Mapping[str, Any], step: str, node: str) -> Attributes:
    """A `guard_verdict` event's span attributes (the feedback goes in a span event)."""
    stage = str(data.get("stage", "evaluate"))
    attrs: Attributes = {
        "guardsearch.guard.name": str(data.get("guard", "")),
        "guardsearch.guard.passed": bool(data.get("passed")),
        "guardsearch.guard.stage": stage,
    }
    # Flags only when set: every attribute costs its encoding in every export.
    if data.get("fatal"):
        attrs["guardsearch.guard.fatal"] = True
    if stage in ("repair", "repaired"):
        attrs["guardsearch.guard.repair_applied"] = True
    if data.get("prevented"):
        attrs["guardsearch.guard.prevented"] = True
    if data.get("score") is not None:
        attrs["guardsearch.guard.score"] = float(data["score"])
    if step:
        attrs["guardsearch.step"] = step
    if node:
        attrs["guardsearch.node.id"] = node
    if data.get("parent"):
        attrs["guardsearch.node.parent_id"] = str(data["parent"])
    if data.get("status"):
        attrs["guardsearch.node.status"] = str(data["status"])
    if data.get("h") is not None:
        attrs["guardsearch.node.h"] = float(data["h"])
    return attrs


def usage(used: Mapping[str, Any]) -> Attributes:
    """A run's usage: the GenAI token totals and `guardsearch.usage.*`."""
    attrs = flat("guardsearch.usage", used)
    if "prompt_tokens" in used:
        attrs["gen_ai.usage.input_tokens"] = int(used["prompt_tokens"])
        attrs["gen_ai.usage.output_tokens"] = int(used.get("completion_tokens", 0))
    return attrs
