"""Stable digests: the same value gives the same hex digest in every process."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(_plain(v) for v in value)
    return value


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace; dataclasses become dicts."""
    return json.dumps(_plain(value), sort_keys=True, separators=(",", ":"), default=str)


def stable_digest(value: Any) -> str:
    """sha256 hex of the canonical JSON of `value`."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
