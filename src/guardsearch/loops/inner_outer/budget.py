"""ControlBudget: the two layers of seed 003, with the linkage between them.

The outer layer is the model (planner) budget: a `Budget` with a call limit (and
optionally tokens / a deadline) that every planner call reserves against through
Metered. The inner layer counts the cheap deterministic work: probe calls (one per
merged beam that was not fully memoised) and inner steps.

Linkage, both ways: when the outer budget runs low (only `outer_reserve` calls left,
kept for the evaluation), the inner policy turns conservative; when the inner loop
plateaus, it asks the outer layer for a replan if the outer budget can pay for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from guardsearch.core.budget import Budget, Limit, deadline, max_calls, max_tokens
from guardsearch.core.errors import ConfigError


@dataclass
class ControlBudget:
    outer_calls: int = 3
    inner_probes: int = 12
    inner_steps: int = 24
    outer_reserve: int = 1
    outer_tokens: int | None = None
    outer_seconds: float | None = None
    probes_used: int = 0
    steps_used: int = 0
    memo_hits: int = 0
    outer: Budget = field(init=False)

    def __post_init__(self) -> None:
        for name in ("outer_calls", "inner_probes", "inner_steps", "outer_reserve"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")
        limit: Limit = max_calls(self.outer_calls)
        if self.outer_tokens is not None:
            limit = limit | max_tokens(self.outer_tokens)
        if self.outer_seconds is not None:
            limit = limit | deadline(self.outer_seconds)
        self.outer = Budget(limit)

    # -- outer ----------------------------------------------------------------------

    @property
    def outer_used(self) -> int:
        return self.outer.used.calls

    @property
    def outer_remaining(self) -> int:
        committed = self.outer.used.calls + self.outer.reserved.calls
        return max(0, self.outer_calls - committed)

    def outer_can(self, calls: int) -> bool:
        """Could `calls` more planner calls be paid for (calls, tokens, deadline)?"""
        from guardsearch.core.usage import Usage

        return calls <= self.outer_remaining and self.outer.violation(Usage(calls=calls)) is None

    @property
    def outer_low(self) -> bool:
        """Only the reserve (the evaluation) is left: the inner loop should be conservative."""
        return self.outer_remaining <= self.outer_reserve

    # -- inner ----------------------------------------------------------------------

    @property
    def inner_exhausted(self) -> str | None:
        if self.probes_used >= self.inner_probes:
            return f"inner probe budget {self.inner_probes} used"
        if self.steps_used >= self.inner_steps:
            return f"inner step budget {self.inner_steps} used"
        return None

    def charge_step(self) -> None:
        self.steps_used += 1

    def charge_probe(self) -> None:
        if self.probes_used >= self.inner_probes:
            raise ConfigError("inner probe budget exhausted; check inner_exhausted first")
        self.probes_used += 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "outer": {
                "limit_calls": self.outer_calls,
                "used_calls": self.outer_used,
                "prompt_tokens": self.outer.used.prompt_tokens,
                "completion_tokens": self.outer.used.completion_tokens,
            },
            "inner": {
                "limit_probes": self.inner_probes,
                "used_probes": self.probes_used,
                "limit_steps": self.inner_steps,
                "used_steps": self.steps_used,
                "memo_hits": self.memo_hits,
            },
        }
