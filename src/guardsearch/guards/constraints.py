"""Prevent: the part of a guard's rule that is a constraint on the output's shape.

A guard may declare a JSON Schema *fragment* (`constraint`): an enum of the source ids
a citation may name, `minItems: 1`, the actions a plan may use. A guarded step merges
the fragments of the guards that must pass into its request's `json_schema`, so a
backend with constrained decoding (llama.cpp's grammar, a server honouring
`response_format`) cannot produce an output that breaks them. The guard still checks
its whole rule on every output: where a backend has no constrained decoding, the rule
stays a guard.

    @guard(constraint={"properties": {"colour": {"enum": ["red", "green"]}}})
    def primary(value): ...

    class CitesRetrieved:              # a guard class: a method of the context
        def constraint(self, context): return {"properties": {"ids": {"items": {"enum": ids}}}}

Which guards must pass: the guard itself, every member of an `all_of`, the hard
members of any other composite or of an `Evaluator`. Fragments merge into the schema
key by key (`merge_fragment`): enums intersect, `required` unites, lower bounds take
the larger and upper bounds the smaller value, sub-schemas merge recursively (into
every branch of an `anyOf`/`oneOf`). A fragment that contradicts the schema is left
out (the rule stays a guard) rather than making an output impossible.

Diversify uses the same machinery: where the output space is one enum (the whole
output, or the one varying field of an object), `exclude_values` removes the values
already judged at that node, so the grammar cannot produce them again.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema

from guardsearch.core.context import Context

Fragment = Mapping[str, Any]
ConstraintLike = Fragment | Callable[[Context], "Fragment | None"] | None

MARK = "$comment"  # the compiled schema says which guards' constraints it holds
_PREFIX = "guard constraints: "
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_SUBSCHEMAS = ("items", "additionalProperties", "contains", "propertyNames", "not")
_LOWER = ("minItems", "minLength", "minimum", "exclusiveMinimum", "minProperties", "minContains")
_UPPER = ("maxItems", "maxLength", "maximum", "exclusiveMaximum", "maxProperties", "maxContains")
_NOTES = ("description", "title", "default", "examples", "$comment")


class Conflict(ValueError):
    """A fragment that no value of the schema can satisfy together with it."""


@dataclass(frozen=True)
class Declared:
    """One guard's constraint for one request."""

    guard: str
    fragment: dict[str, Any]


def declared_constraints(guard: Any, context: Context) -> list[Declared]:
    """The constraints of `guard` and of the members that must pass with it."""
    inner = getattr(guard, "guard", None)
    if inner is not None and hasattr(guard, "hard") and hasattr(guard, "weight"):
        guard = inner  # a composite Member
    out: list[Declared] = []
    members = getattr(guard, "members", None)
    if isinstance(members, tuple):
        every = getattr(guard, "mode", "") == "all"
        for m in members:
            if every or getattr(m, "hard", False):
                out += declared_constraints(m, context)
    own = getattr(guard, "constraint", None)
    if callable(own) and not isinstance(own, Mapping):
        own = own(context)
    if isinstance(own, Mapping) and own:
        out.append(Declared(str(getattr(guard, "name", "guard")), copy.deepcopy(dict(own))))
    return out


def compile_constraints(
    schema: Mapping[str, Any], declared: Sequence[Declared]
) -> tuple[dict[str, Any], list[str], list[str]]:
    """The schema with every declared fragment merged in, the guards whose fragments
    were compiled, and those left out because they contradict the schema."""
    compiled = copy.deepcopy(dict(schema))
    used: list[str] = []
    skipped: list[str] = []
    for item in declared:
        try:
            compiled = merge_fragment(compiled, item.fragment)
        except Conflict:
            skipped.append(item.guard)
            continue
        used.append(item.guard)
    if used:
        compiled[MARK] = _PREFIX + ", ".join(dict.fromkeys(used))
    return compiled, used, skipped


def constraint_names(schema: Mapping[str, Any] | None) -> list[str]:
    """The guards whose constraints a compiled schema holds (none for a plain one)."""
    mark = (schema or {}).get(MARK)
    if not isinstance(mark, str) or not mark.startswith(_PREFIX):
        return []
    return [name for name in mark[len(_PREFIX) :].split(", ") if name]


def without_mark(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema without the compile mark (what a prompt shows)."""
    return {k: v for k, v in schema.items() if not (k == MARK and constraint_names(schema))}


def satisfies(value: Any, schema: Mapping[str, Any]) -> bool:
    """Does `value` satisfy `schema` (a compiled schema: the output kept the rules)?"""
    try:
        return jsonschema.Draft202012Validator(dict(schema)).is_valid(value)
    except (jsonschema.SchemaError, TypeError, ValueError, RecursionError):
        return False


def merge_fragment(schema: Mapping[str, Any], fragment: Fragment) -> dict[str, Any]:
    """`schema` narrowed by `fragment` (a new dict); raises `Conflict` when they cannot
    both hold."""
    return _merge(copy.deepcopy(dict(schema)), fragment, dict(schema))


def _resolve(node: dict[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    """A node that is a local `$ref` is replaced by a copy of its target, so a fragment
    merges into what the reference names (grammar converters ignore a $ref's siblings)."""
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return node
    target: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(target, Mapping) or part not in target:
            return node
        target = target[part]
    if not isinstance(target, Mapping):
        return node
    merged = copy.deepcopy(dict(target))
    merged.update({k: v for k, v in node.items() if k != "$ref"})
    return merged


def _merge(base: dict[str, Any], frag: Fragment, root: Mapping[str, Any]) -> dict[str, Any]:
    if not frag:
        return base
    base = _resolve(base, root)
    branches = next((k for k in ("anyOf", "oneOf") if k in base), None)
    if branches and not any(k in frag for k in ("anyOf", "oneOf")):
        kept = []
        for branch in base[branches]:
            try:
                kept.append(_merge(copy.deepcopy(branch), frag, root))
            except Conflict:
                continue
        if not kept:
            raise Conflict("no branch of the schema admits the fragment")
        base[branches] = kept
        return base
    for key, want in frag.items():
        _merge_key(base, key, want, root)
    _check_bounds(base)
    return base


def _merge_key(base: dict[str, Any], key: str, want: Any, root: Mapping[str, Any]) -> None:
    have: Any = base.get(key)
    if key in _NOTES:
        base.setdefault(key, copy.deepcopy(want))
    elif key not in base:
        base[key] = copy.deepcopy(want)
        if key == "enum" and "const" in base and base["const"] not in want:
            raise Conflict("const is not in the fragment's enum")
    elif key in _SUBSCHEMA_MAPS and isinstance(have, dict) and isinstance(want, Mapping):
        for name, sub in want.items():
            if isinstance(have.get(name), dict) and isinstance(sub, Mapping):
                have[name] = _merge(have[name], sub, root)
            elif name not in have:
                have[name] = copy.deepcopy(sub)
            elif have[name] is False:
                raise Conflict(f"{name} is not allowed by the schema")
    elif key in _SUBSCHEMAS and isinstance(have, dict) and isinstance(want, Mapping):
        base[key] = _merge(have, want, root)
    elif key == "prefixItems" and isinstance(have, list) and isinstance(want, list):
        for i, sub in enumerate(want):
            if i < len(have) and isinstance(have[i], dict):
                have[i] = _merge(have[i], sub, root)
            elif i >= len(have):
                have.append(copy.deepcopy(sub))
    elif key == "enum":
        both = [v for v in have if v in want]
        if not both:
            raise Conflict("the enums have no value in common")
        base[key] = both
    elif key == "required":
        base[key] = list(dict.fromkeys([*have, *want]))
    elif key in _LOWER:
        base[key] = max(have, want)
    elif key in _UPPER:
        base[key] = min(have, want)
    elif key == "type":
        base[key] = _types(have, want)
    elif key == "uniqueItems":
        base[key] = bool(have) or bool(want)
    elif have != want:
        raise Conflict(f"{key}: {have!r} vs {want!r}")


def _types(have: Any, want: Any) -> Any:
    a = [have] if isinstance(have, str) else list(have)
    b = [want] if isinstance(want, str) else list(want)
    both = [t for t in a if t in b or (t == "number" and "integer" in b)]
    both = ["integer" if t == "number" and "integer" in b else t for t in both]
    if not both:
        raise Conflict(f"type: {have!r} vs {want!r}")
    return both[0] if len(both) == 1 else both


def _check_bounds(node: Mapping[str, Any]) -> None:
    for low, high in zip(_LOWER, _UPPER, strict=True):
        if low in node and high in node and node[low] > node[high]:
            raise Conflict(f"{low} {node[low]} > {high} {node[high]}")


# -- diversify: the enum of an enumerable output loses what was already tried ---------------


def enum_location(schema: Mapping[str, Any]) -> list[str] | None:
    """The path of the one enum that decides the whole output, or None.

    The output space is enumerable here when the schema is an enum, or an object whose
    every property is required and fixed (`const`, or a one-value enum) but one, which
    is itself such a location; nothing else may vary (`additionalProperties: false`).
    """
    node = _resolve(dict(schema), schema)
    enum = node.get("enum")
    if isinstance(enum, list) and len(enum) > 1:
        return []
    props = node.get("properties")
    if not isinstance(props, Mapping) or node.get("additionalProperties") is not False:
        return None
    if set(node.get("required", [])) != set(props):
        return None
    varying = []
    for name, sub in props.items():
        sub = _resolve(dict(sub), schema) if isinstance(sub, Mapping) else {}
        fixed = "const" in sub or (isinstance(sub.get("enum"), list) and len(sub["enum"]) == 1)
        if not fixed:
            varying.append((name, sub))
    if len(varying) != 1:
        return None
    name, sub = varying[0]
    below = enum_location({**sub, **({"$defs": schema["$defs"]} if "$defs" in schema else {})})
    return None if below is None else [name, *below]


def exclude_values(schema: Mapping[str, Any], tried: Sequence[Any]) -> dict[str, Any] | None:
    """`schema` with the values already `tried` removed from its deciding enum.

    Returns the schema unchanged (a copy) when the output space is not one enum or
    nothing tried is in it, and None when every value has been tried (nothing new can
    be decoded).
    """
    path = enum_location(schema)
    out = copy.deepcopy(dict(schema))
    if path is None or not tried:
        return out
    seen = [_at(value, path) for value in tried]
    out = _resolve(out, schema)
    node = out
    for name in path:
        node["properties"][name] = _resolve(dict(node["properties"][name]), schema)
        node = node["properties"][name]
    left = [v for v in node["enum"] if v not in seen]
    if not left:
        return None
    node["enum"] = left
    return out


_MISSING = object()


def _at(value: Any, path: Sequence[str]) -> Any:
    for name in path:
        if not isinstance(value, Mapping) or name not in value:
            return _MISSING
        value = value[name]
    return value
