"""uniqueItems over an enum as a grammar (models/unique_enum.py): its language, exactly."""

from __future__ import annotations

import itertools
import json
import re

import pytest

from guardsearch.models import unique_enum

pytest.importorskip("llama_cpp")

from guardsearch.models.llamacpp import schema_to_gbnf

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[()|?]|[A-Za-z0-9-]+')


def _language(grammar: str, start: str = "root") -> set[str]:
    """Every sentence of a small, non-recursive GBNF grammar (literals, rule names,
    groups, alternatives, `?`), with the `space` rule taken as no space."""
    rules = {}
    for line in grammar.strip().splitlines():
        name, _, body = line.partition(" ::= ")
        rules[name.strip()] = _TOKEN.findall(body)
    rules["space"] = ['""']

    def alternatives(tokens: list[str]) -> set[str]:
        out: set[str] = set()
        branch: list[str] = []
        depth = 0
        for t in [*tokens, "|"]:
            if t == "|" and depth == 0:
                out |= sequence(branch)
                branch = []
                continue
            depth += t == "("
            depth -= t == ")"
            branch.append(t)
        return out

    def sequence(tokens: list[str]) -> set[str]:
        results = {""}
        i = 0
        while i < len(tokens):
            t = tokens[i]
            if t == "(":
                depth, j = 1, i + 1
                while depth:
                    depth += {"(": 1, ")": -1}.get(tokens[j], 0)
                    j += 1
                part = alternatives(tokens[i + 1 : j - 1])
                i = j
            elif t.startswith('"'):
                part = {bytes(t[1:-1], "utf-8").decode("unicode_escape")}
                i += 1
            else:
                part = alternatives(rules[t])
                i += 1
            if i < len(tokens) and tokens[i] == "?":
                part = part | {""}
                i += 1
            results = {a + b for a in results for b in part}
        return results

    return alternatives(rules[start])


def _expected(values: list[str], low: int, high: int) -> set[str]:
    return {
        json.dumps({"steps": list(c)}, separators=(",", ":"))
        for k in range(low, high + 1)
        for c in itertools.combinations(values, k)
    }


@pytest.mark.parametrize(("low", "high"), [(0, 4), (1, 2), (2, 3), (3, 3), (1, 9)])
def test_a_unique_enum_list_is_every_ordered_subsequence_within_its_bounds(
    low: int, high: int
) -> None:
    values = ["a", "b", "c", "d"]
    schema = {
        "type": "object",
        "properties": {
            "steps": {
                "type": "array",
                "uniqueItems": True,
                "items": {"type": "string", "enum": values},
                "minItems": low,
                "maxItems": high,
            }
        },
        "required": ["steps"],
    }
    assert _language(schema_to_gbnf(schema)) == _expected(values, low, min(high, 4))


def test_only_arrays_of_one_enum_with_unique_items_are_lifted() -> None:
    plain = {"type": "array", "items": {"enum": ["a"]}}
    free = {"type": "array", "uniqueItems": True, "items": {"type": "string"}}
    lifted: list[dict[str, object]] = []
    assert unique_enum.lift({"x": plain, "y": free}, lifted) == {"x": plain, "y": free}
    assert lifted == []
    assert unique_enum.is_unique_enum({**plain, "uniqueItems": True})
