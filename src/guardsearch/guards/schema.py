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


@dataclass
class SchemaGuard:
    """Checks the artifact's value (parsing its text as JSON if needed) against a schema.

    Feedback names each violation with its location, e.g.
    "missing required field 'colours'" or "at colours: [] is too short".
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
                msgs.append(f"missing required field: {err.message}")
            else:
                msgs.append(f"at {_where(err.absolute_path)}: {err.message[:200]}")
        more = f" (+{len(errors) - _MAX_ERRORS} more)" if len(errors) > _MAX_ERRORS else ""
        return GuardResult.fail("schema violation: " + "; ".join(msgs) + more, self.name)
