"""The Guard protocol and the callable guard."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.errors import ConfigError
from guardsearch.core.guard_result import GuardResult


@runtime_checkable
class Guard(Protocol):
    """Judges an artifact in its context. Must not raise on bad artifacts: it says why."""

    @property
    def name(self) -> str: ...

    async def check(self, artifact: Artifact, context: Context) -> GuardResult: ...


Verdict = GuardResult | bool | str | None
GuardFn = Callable[..., "Verdict | Awaitable[Verdict]"]


def to_result(verdict: Verdict, name: str) -> GuardResult:
    """Normalise a callable's answer: True/None pass, False fails, a string is feedback."""
    if isinstance(verdict, GuardResult):
        return verdict if verdict.guard else _named(verdict, name)
    if verdict is None or verdict is True:
        return GuardResult.ok(name)
    if verdict is False:
        return GuardResult.fail(f"{name} failed", name)
    if isinstance(verdict, str):
        return GuardResult.fail(verdict, name)
    raise ConfigError(f"guard {name!r} returned {type(verdict).__name__}, not a verdict")


def _named(result: GuardResult, name: str) -> GuardResult:
    return replace(result, guard=name)


@dataclass
class FunctionGuard:
    """A guard from a function `f(value)` or `f(value, artifact, context)`, sync or async.

    The function returns True/None (pass), False (fail), a string (fail with that
    feedback) or a full GuardResult. An exception inside it becomes failing feedback,
    because a guard that crashes on odd input must not crash the run.

    `constraint` is the part of the rule that is a shape (a JSON Schema fragment, or a
    function of the context returning one): a guarded step with a schema compiles it
    into its request (guards/constraints.py), and the function still checks it.
    """

    fn: GuardFn
    name: str = ""
    constraint: Mapping[str, Any] | Callable[[Context], Mapping[str, Any] | None] | None = None
    _full: bool = field(init=False, repr=False, default=False)

    def __post_init__(self) -> None:
        if not callable(self.fn):
            raise ConfigError(f"not a guard function: {self.fn!r}")
        self.name = self.name or getattr(self.fn, "__name__", "guard")
        self._full = len(inspect.signature(self.fn).parameters) >= 3

    async def check(self, artifact: Artifact, context: Context) -> GuardResult:
        try:
            if self._full:
                out = self.fn(artifact.value, artifact, context)
            else:
                out = self.fn(artifact.value)
            if inspect.isawaitable(out):
                out = await out
        except ConfigError:
            raise
        except Exception as exc:  # the guard's own bug or odd input: feedback, not a crash
            return GuardResult.fail(
                f"{self.name}: check raised {type(exc).__name__}: {exc}", self.name
            )
        return to_result(out, self.name)


def guard(
    fn: GuardFn | None = None,
    *,
    name: str = "",
    constraint: Mapping[str, Any] | Callable[[Context], Mapping[str, Any] | None] | None = None,
) -> FunctionGuard | Callable[[GuardFn], FunctionGuard]:
    """Decorator: turn a function into a Guard (`@guard`, `@guard(name="...")`, or
    `@guard(constraint={...})` to declare the shape part of its rule)."""
    if fn is None:
        return lambda f: FunctionGuard(f, name, constraint)
    return FunctionGuard(fn, name, constraint)


def as_guard(value: Guard | GuardFn) -> Guard:
    """Accept a Guard or a plain callable."""
    if isinstance(value, Guard):
        return value
    if callable(value):
        return FunctionGuard(value)
    raise ConfigError(f"not a guard: {value!r}")
