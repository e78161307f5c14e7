"""Parsers for model output. They raise `ParseError` with feedback, and nothing else."""

from __future__ import annotations

import json
import re
from typing import Any

from guardsearch.core.errors import ParseError

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_MAX_CHARS = 200_000
_MAX_STARTS = 64


def parse_text(text: str) -> str:
    """Plain text: stripped; empty output is an error."""
    if not isinstance(text, str):
        raise ParseError(f"expected text, got {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise ParseError("output is empty")
    return stripped


def parse_json(text: str) -> Any:
    """Parse JSON from model output: bare, inside a ``` fence, or embedded in prose.

    Small models wrap JSON in prose or fences; we accept the first complete JSON
    object/array we can decode, and say precisely what is wrong otherwise.
    """
    if not isinstance(text, str):
        raise ParseError(f"expected text, got {type(text).__name__}")
    if len(text) > _MAX_CHARS:
        raise ParseError(f"output is too long to parse ({len(text)} chars)")
    stripped = text.strip()
    if not stripped:
        raise ParseError(f"not parseable as JSON: output is empty; {JSON_FIX}")
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError) as first:
        error = first
    for block in _FENCE.findall(stripped):
        try:
            return json.loads(block.strip())
        except (ValueError, RecursionError):
            continue
    decoder = json.JSONDecoder()
    # Bounded so that bracket-heavy junk cannot make parsing quadratic.
    for _, match in zip(range(_MAX_STARTS), re.finditer(r"[\[{]", stripped), strict=False):
        try:
            value, _ = decoder.raw_decode(stripped, match.start())
            return value
        except (ValueError, RecursionError):
            continue
    detail = str(error) if isinstance(error, ValueError) else "nesting too deep"
    raise ParseError(f"not parseable as JSON: {detail}; {JSON_FIX}")


# What the model should change (issue 16: feedback names the fix).
JSON_FIX = "answer with one JSON value only, no prose or code fences around it"
