"""Parsers accept what small models emit and raise ParseError, with feedback, otherwise."""

from __future__ import annotations

import pytest

from guardsearch import ParseError, parse_json
from guardsearch.guards.parse import parse_text


def test_bare_json_is_parsed() -> None:
    assert parse_json(' {"a": 1} ') == {"a": 1}


def test_json_in_a_fence_is_parsed() -> None:
    assert parse_json('Here you go:\n```json\n{"a": [1, 2]}\n```\nDone.') == {"a": [1, 2]}


def test_json_embedded_in_prose_is_parsed() -> None:
    assert parse_json('The answer is {"a": 1}, I think.') == {"a": 1}


def test_empty_output_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="output is empty"):
        parse_json("  \n ")


def test_truncated_json_is_a_parse_error_that_says_why() -> None:
    with pytest.raises(ParseError, match="not parseable as JSON"):
        parse_json('{"colours": ["red", "gre')


def test_too_deep_nesting_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        parse_json("[" * 5000)


def test_too_long_output_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="too long"):
        parse_json("[" + "1," * 200_000 + "1]")


def test_non_text_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="expected text"):
        parse_json(None)  # type: ignore[arg-type]


def test_plain_text_is_stripped() -> None:
    assert parse_text("  Paris \n") == "Paris"


def test_empty_plain_text_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="empty"):
        parse_text(" \t\n")
