"""GuardResult: a guard's verdict, which doubles as a search heuristic."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Check:
    """One named check inside a verdict. Hard checks veto: a failed one means score 0."""

    name: str
    passed: bool
    weight: float = 1.0
    hard: bool = False
    detail: str = ""


@dataclass(frozen=True, kw_only=True)
class GuardResult:
    """Verdict on an artifact.

    `feedback` explains a failure in words the model (and the backtrack heuristic)
    can act on; `score` in 0..1 grades quality when the guard can; `fatal` ends the
    branch at once instead of retrying; `patch` is an optional RFC 6902 JSON Patch
    that repairs the artifact's value; `ask` asks a person for input.
    """

    passed: bool
    feedback: str = ""
    score: float | None = None
    fatal: bool = False
    checks: tuple[Check, ...] = ()
    guard: str = ""
    patch: tuple[dict[str, Any], ...] | None = None
    ask: str | None = None

    def __post_init__(self) -> None:
        if self.score is not None and not 0.0 <= self.score <= 1.0:
            raise ValueError(f"score must be in 0..1, got {self.score}")

    @property
    def hard_failed(self) -> bool:
        return any(c.hard and not c.passed for c in self.checks)

    @classmethod
    def ok(cls, guard: str = "", score: float | None = 1.0, feedback: str = "") -> GuardResult:
        return cls(passed=True, score=score, guard=guard, feedback=feedback)

    @classmethod
    def fail(
        cls,
        feedback: str,
        guard: str = "",
        *,
        score: float | None = 0.0,
        fatal: bool = False,
        patch: Sequence[Mapping[str, Any]] | None = None,
    ) -> GuardResult:
        """A failing verdict; `patch` (RFC 6902 operations) is the fix, when the guard
        knows it: steps and searches apply it and accept the result without a model
        call if the guards then pass (a repair)."""
        return cls(
            passed=False,
            feedback=feedback,
            score=score,
            guard=guard,
            fatal=fatal,
            patch=tuple(dict(op) for op in patch) if patch is not None else None,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "feedback": self.feedback,
            "score": self.score,
            "fatal": self.fatal,
            "guard": self.guard,
            "checks": [
                {
                    "name": c.name,
                    "passed": c.passed,
                    "weight": c.weight,
                    "hard": c.hard,
                    "detail": c.detail,
                }
                for c in self.checks
            ],
        }
