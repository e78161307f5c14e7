"""Structured diffs (docs/guards.md): JSON Patches (RFC 6902) that repair a value.

A guard that knows the fix returns it as `GuardResult.patch`; the step runner and the
search engine apply it instead of regenerating, and keep the repair only when the
patched value passes. `DiffProcessor` proposes repairs for common schema slips of
small models (a number sent as a string, a scalar where a list belongs, a missing
field that has a default, an extra field the schema forbids).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import jsonpatch
import jsonschema

from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.guard_result import GuardResult
from guardsearch.guards.schema import SchemaGuard, SchemaLike, json_schema_of

Patch = tuple[dict[str, Any], ...]


def make_patch(old: Any, new: Any) -> Patch:
    """The JSON Patch that turns `old` into `new`."""
    return tuple(jsonpatch.make_patch(old, new).patch)


def apply_patch(value: Any, patch: Patch | list[dict[str, Any]]) -> Any:
    """`value` with `patch` applied (a new object); raises ValueError if it does not apply."""
    try:
        return jsonpatch.apply_patch(copy.deepcopy(value), list(patch))
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError) as exc:
        raise ValueError(f"patch does not apply: {exc}") from exc


def _pointer(path: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _coerce(value: Any, wanted: Any) -> tuple[bool, Any]:
    """Convert `value` to the JSON type(s) `wanted` when that is unambiguous."""
    types = [wanted] if isinstance(wanted, str) else list(wanted or [])
    for t in types:
        if isinstance(value, str):
            text = value.strip()
            if t == "integer":
                try:
                    return True, int(text)
                except ValueError:
                    pass
            if t == "number":
                try:
                    number = float(text)
                except ValueError:
                    continue
                return True, int(number) if number.is_integer() and "." not in text else number
            if t == "boolean" and text.lower() in ("true", "false"):
                return True, text.lower() == "true"
        if t == "string" and isinstance(value, int | float) and not isinstance(value, bool):
            return True, str(value)
        if t == "array" and not isinstance(value, list):
            return True, [value]
    return False, value


@dataclass
class DiffProcessor:
    """Proposes a JSON Patch that repairs a value against a JSON Schema, if it can."""

    schema: SchemaLike
    json_schema: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.json_schema = json_schema_of(self.schema)
        self._validator = jsonschema.Draft202012Validator(self.json_schema)

    def repair(self, value: Any, *, rounds: int = 4) -> Patch | None:
        """A patch that makes `value` valid, or None when no safe repair is known."""
        if not isinstance(value, dict | list):
            return None
        current = copy.deepcopy(value)
        for _ in range(rounds):
            errors = list(self._validator.iter_errors(current))
            if not errors:
                break
            changed = False
            for error in errors:
                changed = self._fix(current, error) or changed
            if not changed:
                return None
        if list(self._validator.iter_errors(current)):
            return None
        patch = make_patch(value, current)
        return patch or None

    def _fix(self, doc: Any, error: jsonschema.ValidationError) -> bool:
        path = list(error.absolute_path)
        try:
            container, key = _locate(doc, path)
        except (KeyError, IndexError, TypeError):
            return False
        if error.validator == "type" and container is not None:
            ok, fixed = _coerce(container[key], error.validator_value)
            if ok:
                container[key] = fixed
            return ok
        if error.validator == "required" and isinstance(error.instance, dict):
            props = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
            added = False
            wanted: Any = error.validator_value
            for name in wanted:
                sub = props.get(name, {})
                if name not in error.instance and isinstance(sub, dict) and "default" in sub:
                    error.instance[name] = copy.deepcopy(sub["default"])
                    added = True
            return added
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = (
                set(error.schema.get("properties", {})) if isinstance(error.schema, dict) else set()
            )
            extra = [k for k in error.instance if k not in allowed]
            for k in extra:
                del error.instance[k]
            return bool(extra)
        if error.validator == "enum" and container is not None and isinstance(container[key], str):
            options: Any = error.validator_value
            matches = [
                e
                for e in options
                if isinstance(e, str) and e.lower() == container[key].strip().lower()
            ]
            if len(matches) == 1:
                container[key] = matches[0]
                return True
        return False


def _locate(doc: Any, path: list[Any]) -> tuple[Any, Any]:
    """The container holding the value at `path` and its key (None, None for the root)."""
    if not path:
        return None, None
    container = doc
    for part in path[:-1]:
        container = container[part]
    container[path[-1]]
    return container, path[-1]


@dataclass
class RepairingSchemaGuard:
    """A SchemaGuard whose failures carry a repair patch when `DiffProcessor` finds one."""

    schema: SchemaLike
    name: str = "schema"

    def __post_init__(self) -> None:
        self._guard = SchemaGuard(self.schema, name=self.name)
        self._diff = DiffProcessor(self.schema)

    async def check(self, artifact: Artifact, context: Context) -> GuardResult:
        result = await self._guard.check(artifact, context)
        if result.passed or artifact.value is None:
            return result
        patch = self._diff.repair(artifact.value)
        if patch is None:
            return result
        return GuardResult(
            passed=False,
            feedback=result.feedback,
            score=result.score,
            guard=result.guard,
            patch=patch,
        )


def patch_pointer(path: list[Any]) -> str:
    """The JSON Pointer (RFC 6901) for a path of keys and indexes."""
    return _pointer(path)


__all__ = [
    "DiffProcessor",
    "Patch",
    "RepairingSchemaGuard",
    "apply_patch",
    "make_patch",
    "patch_pointer",
]
