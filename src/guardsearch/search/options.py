"""Strategy options given as JSON, checked against what each strategy declares.

POST /solve, durable run specs and `runs start --options` take a search's options as
a JSON object. Each strategy declares its options (its `Options` dataclass, plus the
engine's `EngineOptions`); `options_model(strategy)` turns the ones that plain JSON
can set (numbers, strings, booleans) into a pydantic model, and `check_json_options`
validates a JSON object against it:

    check_json_options("beam", {"width": 3})     # -> {"width": 3}
    check_json_options("beam", {"trace": "x"})   # ConfigError: unknown option ...; allowed: ...

Options that take code (a heuristic, a cost function, a stop signal) and keywords of
`search()` itself (`trace`, `budget`, ...) are never accepted from JSON. Numbers are
bounded (`LIMITS`): a request cannot ask for a billion samples per expansion.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Annotated, Any, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from guardsearch.core.errors import ConfigError
from guardsearch.search.expand import EngineOptions
from guardsearch.search.strategies.base import get_strategy

# (lowest, highest) for options whose size multiplies work or has a meaning of its own;
# every other number is bounded by DEFAULT_LIMIT.
LIMITS: dict[str, tuple[float, float]] = {
    "samples": (1, 64),
    "concurrency": (1, 64),
    "n": (1, 64),
    "temperature": (0.0, 2.0),
    "reexpand_temperature": (0.0, 2.0),
    "duplicate_temperature": (0.0, 2.0),
    "seed": (0, 2**32 - 1),
}
DEFAULT_LIMIT = 1_000_000
MAX_STRING_CHARS = 64

_PLAIN: dict[str, type] = {"int": int, "float": float, "bool": bool, "str": str}


def _members(annotation: object) -> list[str]:
    """The members of a field's annotation, as names: `int | None` -> ['int', 'None']."""
    if isinstance(annotation, type):
        return [annotation.__name__]
    text, parts, depth, start = str(annotation), [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "[("
        depth -= ch in "])"
        if ch == "|" and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def _json_type(name: str, members: list[str]) -> Any:
    """The pydantic type of an option that JSON may set, or None if it takes code."""
    low, high = LIMITS.get(name, (-DEFAULT_LIMIT, DEFAULT_LIMIT))
    kinds: list[Any] = []
    for member in members:
        kind = _PLAIN.get(member)
        if kind is bool:
            kinds.append(bool)
        elif kind is int:
            kinds.append(Annotated[int, Field(ge=low, le=high)])
        elif kind is float:
            kinds.append(Annotated[float, Field(ge=low, le=high)])
        elif kind is str:
            kinds.append(Annotated[str, Field(max_length=MAX_STRING_CHARS)])
    if not kinds:
        return None
    if "None" in members:
        kinds.append(type(None))
    return kinds[0] if len(kinds) == 1 else Union[tuple(kinds)]  # noqa: UP007


@functools.cache
def options_model(strategy: str) -> type[BaseModel]:
    """A pydantic model of the options of `strategy` that plain JSON may set."""
    declared = [
        *dataclasses.fields(EngineOptions),
        *dataclasses.fields(get_strategy(strategy).Options),
    ]
    fields: dict[str, Any] = {}
    for f in declared:
        kind = _json_type(f.name, _members(f.type))
        if kind is not None:
            fields[f.name] = (kind, None)
    config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
    model: type[BaseModel] = create_model(f"{strategy}_options", __config__=config, **fields)
    return model


def check_json_options(strategy: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """`options` if `strategy` declares every one of them with a value in range;
    otherwise a ConfigError that names the allowed options (or the bad value)."""
    model = options_model(strategy)
    allowed = sorted(model.model_fields)
    unknown = sorted(str(k) for k in options if k not in model.model_fields)
    if unknown:
        raise ConfigError(
            f"unknown option(s) for strategy {strategy!r}: {', '.join(unknown)}; "
            f"allowed: {', '.join(allowed)}"
        )
    try:
        model.model_validate(dict(options))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:3]
        )
        raise ConfigError(f"bad option(s) for strategy {strategy!r}: {problems}") from None
    return dict(options)


__all__ = ["LIMITS", "check_json_options", "options_model"]
