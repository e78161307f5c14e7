"""Artifact: what one attempt of a step produced."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from guardsearch.core.usage import ZERO, Usage


@dataclass(frozen=True, kw_only=True)
class Artifact:
    """Raw model text, its parsed value, and where it came from."""

    id: str
    step: str
    text: str
    value: Any = None
    attempt: int = 1
    parent_id: str | None = None
    context_digest: str = ""
    usage: Usage = field(default=ZERO)
    parse_error: str | None = None
