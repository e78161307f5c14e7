"""Guards: schema, regex, callable, composites (all/any/majority/weighted)."""

from guardsearch.guards.base import FunctionGuard, Guard, as_guard, guard, to_result
from guardsearch.guards.composite import (
    Composite,
    Member,
    all_of,
    any_of,
    hard,
    majority,
    member,
    weighted,
)
from guardsearch.guards.parse import parse_json, parse_text
from guardsearch.guards.regex import RegexGuard
from guardsearch.guards.schema import SchemaGuard, json_schema_of, load_schema_file

__all__ = [
    "Composite",
    "FunctionGuard",
    "Guard",
    "Member",
    "RegexGuard",
    "SchemaGuard",
    "all_of",
    "any_of",
    "as_guard",
    "guard",
    "hard",
    "json_schema_of",
    "load_schema_file",
    "majority",
    "member",
    "parse_json",
    "parse_text",
    "to_result",
    "weighted",
]
