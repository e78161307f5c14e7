"""SchemaGuard: the value must match a JSON Schema or a pydantic model."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema
from pydantic import BaseModel, ValidationError

from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.errors import ConfigError, ParseError
from guardsearch.core.guard_result import GuardResult
from guardsearch.guards.parse import parse_json

SchemaLike = Mapping[str, Any] | type[BaseModel]
_MAX_ERRORS = 5


def json_schema_of(schema: SchemaLike) -> dict[str, Any]:
    """The JSON Schema dict for a schema dict or a pydantic model class."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    if isinstance(schema, Mapping):
        try:
            jsonschema.Draft202012Validator.check_schema(dict(schema))
        except jsonschema.SchemaError as exc:
            raise ConfigError(f"invalid JSON Schema: {exc.message}") from exc
        return dict(schema)
    raise ConfigError(f"not a schema: {schema!r}")


def load_schema_file(path: str) -> dict[str, Any]:
    """Read and check a JSON Schema file; any problem is a ConfigError naming the file."""
    try:
        with open(path, encoding="utf-8") as fh:
            schema = json.load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read schema file {path}: {exc.strerror}") from exc
    except ValueError as exc:
        raise ConfigError(f"schema file {path} is not valid JSON: {exc}") from exc
    if not isinstance(schema, dict):
        raise ConfigError(f"schema file {path} must hold a JSON object")
    return json_schema_of(schema)


def _where(path: Any) -> str:
    parts = [str(p) for p in path]
    return "/".join(parts) if parts else "(root)"


_TYPE_WORDS = {
    "integer": "a whole number",
    "number": "a number",
    "string": "a string in quotes",
    "boolean": "true or false",
    "array": "a list [...]",
    "object": "an object {...}",
    "null": "null",
}


def fix_hint(err: jsonschema.ValidationError) -> str:
    """The change that removes one violation, in words a model can act on (issue 16:
    feedback names the fix, not only the failure); "" when there is no simple one."""
    want: Any = err.validator_value
    kind = err.validator
    if kind == "required":
        missing = [
            name for name in want if isinstance(err.instance, dict) and name not in err.instance
        ]
        return f" (add {', '.join(repr(m) for m in missing)})" if missing else ""
    if kind == "type":
        types = [want] if isinstance(want, str) else list(want)
        return " (write " + " or ".join(_TYPE_WORDS.get(t, t) for t in types) + ")"
    if kind == "enum":
        shown = ", ".join(json.dumps(v) for v in list(want)[:12])
        more = ", ..." if len(want) > 12 else ""
        return f" (use one of: {shown}{more})"
    if kind == "const":
        return f" (write exactly {json.dumps(want)})"
    if kind == "additionalProperties" and isinstance(err.instance, dict):
        allowed = err.schema.get("properties", {}) if isinstance(err.schema, dict) else {}
        extra = [k for k in err.instance if k not in allowed]
        return f" (remove {', '.join(repr(k) for k in extra)})" if extra else ""
    bounds = {
        "minItems": "give at least {} item(s)",
        "maxItems": "give at most {} item(s)",
        "minLength": "write at least {} character(s)",
        "maxLength": "write at most {} character(s)",
        "minimum": "give a value of at least {}",
        "maximum": "give a value of at most {}",
        "exclusiveMinimum": "give a value above {}",
        "exclusiveMaximum": "give a value below {}",
        "pattern": "write a value matching {}",
    }
    if kind in bounds:
        return " (" + bounds[kind].format(json.dumps(want) if kind == "pattern" else want) + ")"
    return ""


@dataclass
class SchemaGuard:
    """Checks the artifact's value (parsing its text as JSON if needed) against a schema.

    Feedback names each violation with its location and the fix, e.g.
    "missing required field: 'colours' is a required property (add 'colours')" or
    "at colours: [] is too short (give at least 1 item(s))".
    """

    schema: SchemaLike
    name: str = "schema"
    json_schema: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.json_schema = json_schema_of(self.schema)
        self._validator = jsonschema.Draft202012Validator(self.json_schema)

    def value_of(self, artifact: Artifact) -> Any:
        if artifact.value is not None:
            return artifact.value
        return parse_json(artifact.text)

    async def check(self, artifact: Artifact, context: Context) -> GuardResult:
        try:
            value = self.value_of(artifact)
        except ParseError as exc:
            return GuardResult.fail(str(exc), self.name)
        if isinstance(self.schema, type):
            try:
                self.schema.model_validate(value)
            except ValidationError as exc:
                msgs = [f"at {_where(e['loc'])}: {e['msg']}" for e in exc.errors()[:_MAX_ERRORS]]
                return GuardResult.fail("schema violation: " + "; ".join(msgs), self.name)
            return GuardResult.ok(self.name)
        errors = sorted(self._validator.iter_errors(value), key=lambda e: list(e.path))
        if not errors:
            return GuardResult.ok(self.name)
        msgs = []
        for err in errors[:_MAX_ERRORS]:
            if err.validator == "required":
                msgs.append(f"missing required field: {err.message}{fix_hint(err)}")
            else:
                where = _where(err.absolute_path)
                msgs.append(f"at {where}: {err.message[:200]}{fix_hint(err)}")
        more = f" (+{len(errors) - _MAX_ERRORS} more)" if len(errors) > _MAX_ERRORS else ""
        return GuardResult.fail("schema violation: " + "; ".join(msgs) + more, self.name)
