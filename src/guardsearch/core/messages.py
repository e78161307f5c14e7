"""What goes to a model and what comes back. Pure values; backends live in `models/`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from guardsearch.core.digest import stable_digest
from guardsearch.core.usage import ZERO, Usage

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True, kw_only=True)
class ModelRequest:
    """A chat request. Deterministic by default: temperature 0 and a fixed seed."""

    messages: tuple[Message, ...]
    temperature: float = 0.0
    seed: int | None = 0
    max_tokens: int = 512
    stop: tuple[str, ...] = ()
    json_schema: Mapping[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        """Everything that determines the answer, as JSON data (what logs record)."""
        return {
            "messages": [[m.role, m.content] for m in self.messages],
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "stop": list(self.stop),
            "json_schema": dict(self.json_schema) if self.json_schema else None,
        }

    def digest(self) -> str:
        """Stable digest of `as_dict()`: the key under which caches keep the answer."""
        return stable_digest(self.as_dict())

    def with_max_tokens(self, n: int) -> ModelRequest:
        return replace(self, max_tokens=n)

    @property
    def prompt_text(self) -> str:
        return "\n".join(m.content for m in self.messages)


@dataclass(frozen=True, kw_only=True)
class Completion:
    """A model's answer, what it cost, and how long it took."""

    text: str
    usage: Usage = field(default=ZERO)
    latency_s: float = 0.0
    model: str = ""
    finish_reason: str = "stop"
    # What a server said beyond the answer (structured-output mode and fallback, server
    # timings); the trace records it with the call. Not kept by caches: a replayed
    # answer did not happen on a server.
    details: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def as_dict(self) -> dict[str, Any]:
        """The completion as JSON data, as caches and replay logs store it."""
        return {
            "text": self.text,
            "usage": asdict(self.usage),
            "latency_s": self.latency_s,
            "model": self.model,
            "finish_reason": self.finish_reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Completion:
        """The inverse of `as_dict` (fields missing from older records take defaults)."""
        return cls(
            text=data["text"],
            usage=Usage(**data.get("usage", {})),
            latency_s=float(data.get("latency_s", 0.0)),
            model=data.get("model", ""),
            finish_reason=data.get("finish_reason", "stop"),
        )
