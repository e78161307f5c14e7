"""Guards: schema, regex, callable, composites (all/any/majority/weighted), the
multi-signal evaluator and structured (JSON Patch) repairs."""

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
from guardsearch.guards.diff import (
    DiffProcessor,
    RepairingSchemaGuard,
    apply_patch,
    make_patch,
)
from guardsearch.guards.evaluator import (
    Evaluator,
    RubricItem,
    active_model,
    using_model,
)
from guardsearch.guards.parse import parse_json, parse_text
from guardsearch.guards.regex import RegexGuard
from guardsearch.guards.schema import SchemaGuard, json_schema_of, load_schema_file

__all__ = [
    "Composite",
    "DiffProcessor",
    "Evaluator",
    "FunctionGuard",
    "Guard",
    "Member",
    "RegexGuard",
    "RepairingSchemaGuard",
    "RubricItem",
    "SchemaGuard",
    "active_model",
    "all_of",
    "any_of",
    "apply_patch",
    "as_guard",
    "guard",
    "hard",
    "json_schema_of",
    "load_schema_file",
    "majority",
    "make_patch",
    "member",
    "parse_json",
    "parse_text",
    "to_result",
    "using_model",
    "weighted",
]
