"""FunctionGuard: any function is a guard; its answer is normalised to a GuardResult."""

from __future__ import annotations

import pytest

from guardsearch import Artifact, ConfigError, Context, FunctionGuard, GuardResult, guard
from guardsearch.guards.base import as_guard

CTX = Context(objective="count")
ART = Artifact(id="a", step="s", text="3", value=3)


async def check(fn: object) -> GuardResult:
    return await FunctionGuard(fn).check(ART, CTX)  # type: ignore[arg-type]


async def test_true_passes() -> None:
    assert (await check(lambda v: True)).passed


async def test_none_passes() -> None:
    assert (await check(lambda v: None)).passed


async def test_false_fails_with_feedback_naming_the_guard() -> None:
    def positive(value: int) -> bool:
        return value < 0

    result = await check(positive)
    assert not result.passed
    assert result.feedback == "positive failed"


async def test_a_string_fails_with_that_string_as_feedback() -> None:
    result = await check(lambda v: "too small")
    assert not result.passed
    assert result.feedback == "too small"


async def test_a_guard_result_is_kept_and_named_after_the_guard() -> None:
    def graded(value: int) -> GuardResult:
        return GuardResult(passed=True, score=0.4)

    result = await check(graded)
    assert result.passed
    assert result.score == 0.4
    assert result.guard == "graded"


async def test_a_one_argument_function_receives_the_value() -> None:
    seen: list[object] = []
    await check(lambda v: seen.append(v))
    assert seen == [3]


async def test_a_three_argument_function_receives_value_artifact_and_context() -> None:
    seen: list[object] = []

    def full(value: int, artifact: Artifact, context: Context) -> None:
        seen.extend([value, artifact, context])

    await check(full)
    assert seen == [3, ART, CTX]


async def test_an_async_function_is_awaited() -> None:
    async def slow(value: int) -> str:
        return "async no"

    assert (await check(slow)).feedback == "async no"


async def test_an_exception_inside_becomes_failing_feedback() -> None:
    def crashy(value: int) -> bool:
        raise ValueError("boom")

    result = await check(crashy)
    assert not result.passed
    assert result.feedback == "crashy: check raised ValueError: boom"


async def test_an_exception_inside_an_async_function_becomes_failing_feedback() -> None:
    async def crashy(value: int) -> bool:
        raise KeyError("missing")

    result = await check(crashy)
    assert not result.passed
    assert "KeyError" in result.feedback


async def test_a_config_error_inside_is_raised_not_hidden() -> None:
    def misconfigured(value: int) -> bool:
        raise ConfigError("bad option")

    with pytest.raises(ConfigError, match="bad option"):
        await check(misconfigured)


async def test_an_answer_that_is_not_a_verdict_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not a verdict"):
        await check(lambda v: 42)


async def test_the_guard_decorator_makes_a_named_guard() -> None:
    @guard(name="odd")
    def is_odd(value: int) -> bool:
        return value % 2 == 1

    assert is_odd.name == "odd"
    assert (await is_odd.check(ART, CTX)).passed


def test_the_bare_guard_decorator_uses_the_function_name() -> None:
    @guard
    def is_odd(value: int) -> bool:
        return value % 2 == 1

    assert is_odd.name == "is_odd"


def test_something_that_is_not_callable_is_not_a_guard() -> None:
    with pytest.raises(ConfigError, match="not a guard"):
        as_guard(42)  # type: ignore[arg-type]
