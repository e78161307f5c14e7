"""What goes to a model and what comes back. Pure values; backends live in `models/`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from guardsearch.core.digest import stable_digest
from guardsearch.core.usage import ZERO, Usage

Role = Literal["system", "user", "assistant"]

# What a call is for, as a model ladder tells calls apart (`models/ladder.py`): a
# proposer writes candidates, a judge scores them, a repair rewrites a rejected one, a
# code writer writes code that tests will check.
CALL_ROLES = ("propose", "judge", "repair", "code")


@dataclass(frozen=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True, kw_only=True)
class CallInfo:
    """What the caller knows about a call: its role and how the guards have answered so far.

    `rejections` counts the candidates the guards rejected at this step (earlier attempts)
    or search node (failed children), `repeats` the proposals there that repeated an
    earlier one, `verdicts` the names of the guards that rejected them, oldest first.
    Backends ignore it; a model ladder (`models/ladder.py`) picks a model by it. It is not
    part of the request's digest: it does not change what a given model answers.
    """

    role: str = "propose"
    rejections: int = 0
    repeats: int = 0
    verdicts: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "rejections": self.rejections,
            "repeats": self.repeats,
            "verdicts": list(self.verdicts),
        }


FIRST_CALL = CallInfo()
JUDGE = CallInfo(role="judge")  # what calls that score candidates carry


@dataclass(frozen=True, kw_only=True)
class ModelRequest:
    """A chat request. Deterministic by default: temperature 0 and a fixed seed.

    `call` says what the call is for (`CallInfo`); it stays out of `as_dict`, `digest`
    and comparisons.
    """

    messages: tuple[Message, ...]
    temperature: float = 0.0
    seed: int | None = 0
    max_tokens: int = 512
    stop: tuple[str, ...] = ()
    json_schema: Mapping[str, Any] | None = None
    call: CallInfo = field(default=FIRST_CALL, compare=False)

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

    def with_call(self, call: CallInfo) -> ModelRequest:
        return replace(self, call=call)

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
