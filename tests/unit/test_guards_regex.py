"""RegexGuard: the text must (or must not) match a pattern."""

from __future__ import annotations

import re

import pytest

from guardsearch import Artifact, ConfigError, Context, RegexGuard

CTX = Context(objective="answer")


def text(raw: str) -> Artifact:
    return Artifact(id="a", step="s", text=raw)


async def test_a_required_pattern_that_occurs_passes() -> None:
    assert (await RegexGuard(r"\d+").check(text("answer: 42"), CTX)).passed


async def test_a_required_pattern_that_is_absent_fails_naming_the_pattern() -> None:
    result = await RegexGuard(r"\d+").check(text("forty-two"), CTX)
    assert not result.passed
    assert result.feedback == r"output must match /\d+/"


async def test_a_forbidden_pattern_that_occurs_fails() -> None:
    result = await RegexGuard("TODO", must_match=False).check(text("TODO: finish"), CTX)
    assert not result.passed
    assert result.feedback == "output must not match /TODO/"


async def test_a_forbidden_pattern_that_is_absent_passes() -> None:
    assert (await RegexGuard("TODO", must_match=False).check(text("done"), CTX)).passed


async def test_custom_feedback_replaces_the_default() -> None:
    guard = RegexGuard(r"\d", feedback="include a digit")
    assert (await guard.check(text("none"), CTX)).feedback == "include a digit"


async def test_flags_are_applied() -> None:
    assert (await RegexGuard("yes", flags=re.IGNORECASE).check(text("YES"), CTX)).passed


def test_an_invalid_regex_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="invalid regex"):
        RegexGuard("(unclosed")
