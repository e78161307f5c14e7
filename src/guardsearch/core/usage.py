"""Usage: what model calls cost (calls, tokens, money)."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True, kw_only=True)
class Usage:
    """Calls and tokens spent (or reserved). Adds and subtracts field by field."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cost: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_prompt_tokens=self.cached_prompt_tokens + other.cached_prompt_tokens,
            cost=self.cost + other.cost,
        )

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls - other.calls,
            prompt_tokens=self.prompt_tokens - other.prompt_tokens,
            completion_tokens=self.completion_tokens - other.completion_tokens,
            cached_prompt_tokens=self.cached_prompt_tokens - other.cached_prompt_tokens,
            cost=self.cost - other.cost,
        )

    def as_dict(self) -> dict[str, int | float]:
        d: dict[str, int | float] = asdict(self)
        d["total_tokens"] = self.total_tokens
        return d

    def describe(self) -> str:
        text = f"{self.calls} calls, {self.prompt_tokens}+{self.completion_tokens} tokens"
        return text + (f", ${self.cost:.4f}" if self.cost else "")


ZERO = Usage()
