"""Composite guards: all / any / majority / weighted, the multi-signal evaluator's basis.

Members are weighted; hard members veto (a failed hard check gives score 0) and are
run first, so a cheap objective check can reject a candidate before any
model-backed rubric is asked (a cheap pre-filter).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.errors import ConfigError
from guardsearch.core.guard_result import Check, GuardResult
from guardsearch.guards.base import Guard, GuardFn, as_guard

Mode = Literal["all", "any", "majority", "weighted"]


@dataclass(frozen=True)
class Member:
    """A guard inside a composite, with its weight and whether it is a hard (veto) check."""

    guard: Guard
    weight: float = 1.0
    hard: bool = False

    @property
    def name(self) -> str:
        return self.guard.name


def member(g: Guard | GuardFn | Member, weight: float = 1.0, *, hard: bool = False) -> Member:
    """Wrap a guard with a weight; `hard=True` makes a failure veto the whole verdict."""
    if isinstance(g, Member):
        return g
    if weight <= 0:
        raise ConfigError(f"guard weight must be > 0, got {weight}")
    return Member(as_guard(g), weight, hard)


def hard(g: Guard | GuardFn, weight: float = 3.0) -> Member:
    """An objective check: weighs more than a rubric answer and vetoes when it fails."""
    return member(g, weight, hard=True)


def _score(result: GuardResult) -> float:
    if result.score is not None:
        return result.score
    return 1.0 if result.passed else 0.0


@dataclass(frozen=True)
class Composite:
    """Combines member verdicts by `mode`; see `all_of`, `any_of`, `majority`, `weighted`."""

    members: tuple[Member, ...]
    mode: Mode
    threshold: float = 0.5
    name: str = ""

    def __post_init__(self) -> None:
        if not self.members:
            raise ConfigError("a composite guard needs at least one member")
        if not 0.0 <= self.threshold <= 1.0:
            raise ConfigError(f"threshold must be in 0..1, got {self.threshold}")
        if not self.name:
            inner = ", ".join(m.name for m in self.members)
            object.__setattr__(self, "name", f"{self.mode}({inner})")

    async def check(self, artifact: Artifact, context: Context) -> GuardResult:
        ordered = sorted(self.members, key=lambda m: not m.hard)  # hard checks first
        results: list[tuple[Member, GuardResult]] = []
        for m in ordered:
            result = await m.guard.check(artifact, context)
            results.append((m, result))
            if m.hard and not result.passed:
                break  # veto: no need to spend anything on the rest
            if self.mode == "all" and not result.passed and result.fatal:
                break
        return self._combine(results)

    def _combine(self, results: list[tuple[Member, GuardResult]]) -> GuardResult:
        checks = tuple(
            Check(name=m.name, passed=r.passed, weight=m.weight, hard=m.hard, detail=r.feedback)
            for m, r in results
        )
        failed = [(m, r) for m, r in results if not r.passed]
        fatal = any(r.fatal for _, r in failed)
        feedback = "; ".join(r.feedback or f"{m.name} failed" for m, r in failed)
        vetoed = any(m.hard for m, _ in failed)
        total_weight = sum(m.weight for m, _ in results)
        mean = sum(m.weight * _score(r) for m, r in results) / total_weight
        patch = next((r.patch for _, r in failed if r.patch), None)
        if self.mode == "all":
            passed, score = not failed, (0.0 if vetoed else mean)
        elif self.mode == "any":
            passed = not vetoed and len(failed) < len(results)
            score = 0.0 if vetoed else max(_score(r) for _, r in results)
            if passed:
                feedback, fatal = "", False
        elif self.mode == "majority":
            yes = sum(m.weight for m, r in results if r.passed)
            passed = not vetoed and yes > total_weight / 2  # a tie is not a majority
            score = 0.0 if vetoed else yes / total_weight
        else:
            score = 0.0 if vetoed else mean
            passed = not vetoed and score >= self.threshold
        if passed and self.mode != "all":
            fatal = False
        if not passed and not feedback:
            low = sorted(results, key=lambda mr: _score(mr[1]))[:2]
            weakest = ", ".join(f"{m.name} ({_score(r):.2f})" for m, r in low)
            feedback = (
                f"{self.name}: score {score:.2f} below threshold {self.threshold:.2f}; "
                f"improve what scored lowest: {weakest}"
            )
        return GuardResult(
            passed=passed,
            feedback=feedback,
            score=max(0.0, min(1.0, score)),
            fatal=fatal and not passed,
            checks=checks,
            guard=self.name,
            patch=patch if not passed else None,
        )


def _members(guards: Sequence[Guard | GuardFn | Member]) -> tuple[Member, ...]:
    return tuple(member(g) for g in guards)


def all_of(*guards: Guard | GuardFn | Member, name: str = "") -> Composite:
    """Passes when every member passes; score is the weighted mean (0 on a hard failure)."""
    return Composite(_members(guards), "all", name=name)


def any_of(*guards: Guard | GuardFn | Member, name: str = "") -> Composite:
    """Passes when at least one member passes (hard members still veto)."""
    return Composite(_members(guards), "any", name=name)


def majority(*guards: Guard | GuardFn | Member, name: str = "") -> Composite:
    """Passes when members holding more than half the weight pass; a tie fails."""
    return Composite(_members(guards), "majority", name=name)


def weighted(
    *guards: Guard | GuardFn | Member, threshold: float = 0.7, name: str = ""
) -> Composite:
    """The multi-signal verdict: weighted mean of member scores must reach `threshold`;
    any failed hard member gives score 0."""
    return Composite(_members(guards), "weighted", threshold=threshold, name=name)
