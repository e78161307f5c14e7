"""ControlBudget: the two layers of the inner/outer loop, with the linkage between them.

Both layers are `Budget`s. The outer one is the model (planner) budget: every planner
call reserves against it through Metered. The inner one counts the cheap
deterministic work as calls: one per probe (a merged beam that was not fully
memoised). The inner steps are a structural cap, like a loop's iterations.

Linkage, both ways: when the outer budget cannot pay one more call and still keep
`outer_reserve` calls (for the evaluation), the inner policy turns conservative; when
the inner loop plateaus, it asks the outer layer for a replan if the outer budget can
pay for it and keep the reserve.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from guardsearch.core.budget import Budget, BudgetLike
from guardsearch.core.errors import ConfigError
from guardsearch.core.usage import Usage

DEFAULT_OUTER_CALLS = 3
DEFAULT_INNER_PROBES = 12
DEFAULT_INNER_STEPS = 24
_CALL = Usage(calls=1)


@dataclass
class ControlBudget:
    """The outer (model) and inner (probe) ledgers of one run, and the inner step count."""

    outer: Budget = field(default_factory=lambda: Budget.of(DEFAULT_OUTER_CALLS))
    inner: Budget = field(default_factory=lambda: Budget.of(DEFAULT_INNER_PROBES))
    inner_steps: int = DEFAULT_INNER_STEPS
    outer_reserve: int = 1
    steps_used: int = 0
    memo_hits: int = 0

    def __post_init__(self) -> None:
        for name in ("inner_steps", "outer_reserve"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")

    @classmethod
    def of(
        cls,
        outer: BudgetLike = DEFAULT_OUTER_CALLS,
        inner: BudgetLike = DEFAULT_INNER_PROBES,
        *,
        inner_steps: int = DEFAULT_INNER_STEPS,
        outer_reserve: int = 1,
    ) -> ControlBudget:
        """Both layers from anything `Budget.of` takes (a number is a number of calls)."""
        return cls(
            outer=Budget.of(outer),
            inner=Budget.of(inner),
            inner_steps=inner_steps,
            outer_reserve=outer_reserve,
        )

    # -- outer ----------------------------------------------------------------------

    @property
    def outer_used(self) -> int:
        return self.outer.used.calls

    def outer_affords(self, calls: int = 1) -> bool:
        """Could `calls` more planner calls be paid for and the reserve still be kept?"""
        return self.outer.affords(Usage(calls=calls), reserve=Usage(calls=self.outer_reserve))

    @property
    def outer_low(self) -> bool:
        """Only the reserve (the evaluation) is left: the inner loop should be conservative."""
        return not self.outer_affords()

    # -- inner ----------------------------------------------------------------------

    @property
    def probes_used(self) -> int:
        return self.inner.used.calls

    @property
    def inner_exhausted(self) -> str | None:
        if not self.inner.affords(_CALL):
            return f"inner probe budget {self.inner.allowance.calls} used"
        if self.steps_used >= self.inner_steps:
            return f"inner step budget {self.inner_steps} used"
        return None

    def charge_step(self) -> None:
        self.steps_used += 1

    def charge_probe(self) -> None:
        """Book one probe call; `BudgetExceeded` when the inner budget cannot pay it."""
        self.inner.charge(_CALL)

    def as_dict(self) -> dict[str, Any]:
        return {
            "outer": {
                "limit_calls": self.outer.allowance.calls,
                "used_calls": self.outer_used,
                "prompt_tokens": self.outer.used.prompt_tokens,
                "completion_tokens": self.outer.used.completion_tokens,
            },
            "inner": {
                "limit_probes": self.inner.allowance.calls,
                "used_probes": self.probes_used,
                "limit_steps": self.inner_steps,
                "used_steps": self.steps_used,
                "memo_hits": self.memo_hits,
            },
        }
