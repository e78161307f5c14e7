"""`uniqueItems` over an enum, as a grammar: a list that cannot name a value twice.

llama-cpp-python's JSON-schema converter ignores `uniqueItems`, so a small model
asked for "at least 4 of these steps" under a grammar repeats one step four times
(issue 16: half of a search's candidates were such repeats). For an array whose
items are one enum, the grammar built here lists the enum's values *in their order*,
each at most once: an ordered subsequence, bounded by the array's `minItems` and
`maxItems`. Any output it allows satisfies the schema (a stricter grammar, never a
looser one); the model still chooses which values, and where to stop.

`lift` swaps each such array in a schema for a placeholder constant before the
converter runs; `splice` puts the subsequence rules in place of the placeholders'
rules afterwards. The rules are states "value i was item c": O(n^2 x maxItems)
alternatives for n values (about 10,000 for 36 values and 8 items).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_MARKER = "__guardsearch_unique_enum_{}__"


def is_unique_enum(node: Any) -> bool:
    """An array node with `uniqueItems: true` whose items are one enum (and nothing else
    that a grammar would have to honour per item)."""
    if not isinstance(node, dict) or node.get("uniqueItems") is not True:
        return False
    items = node.get("items")
    return (
        isinstance(items, dict)
        and isinstance(items.get("enum"), list)
        and bool(items["enum"])
        and "prefixItems" not in node
        and "contains" not in node
    )


def lift(schema: Any, lifted: list[dict[str, Any]]) -> Any:
    """A copy of `schema` with each unique-enum array replaced by a placeholder `const`;
    the arrays are appended to `lifted` in the placeholders' order."""
    if is_unique_enum(schema):
        lifted.append(schema)
        return {"const": _MARKER.format(len(lifted) - 1)}
    if isinstance(schema, dict):
        return {k: lift(v, lifted) for k, v in schema.items()}
    if isinstance(schema, list):
        return [lift(v, lifted) for v in schema]
    return schema


def splice(
    rules: dict[str, str], lifted: list[dict[str, Any]], literal: Callable[[str], str]
) -> None:
    """Replace each placeholder's rule in `rules` (name -> body, the converter's) by the
    ordered-subsequence grammar of its array; `literal` quotes a string for GBNF."""
    for index, node in enumerate(lifted):
        mark = literal(json.dumps(_MARKER.format(index)))
        names = [name for name, body in rules.items() if body.strip() == mark]
        if not names:
            raise ValueError("the placeholder of a uniqueItems enum was not found")
        for name in names:
            body, extra = _subsequence(name, node, literal)
            rules[name] = body
            rules.update(extra)


def _subsequence(
    name: str, node: dict[str, Any], literal: Callable[[str], str]
) -> tuple[str, dict[str, str]]:
    values = list(dict.fromkeys(json.dumps(v) for v in node["items"]["enum"]))
    n = len(values)
    high = min(int(node.get("maxItems", n)), n)
    low = min(int(node.get("minItems", 0)), high)
    item = [f"{name}-v{i}" for i in range(n)]
    rules = {item[i]: literal(v) for i, v in enumerate(values)}

    def state(i: int, count: int) -> str:
        return f"{name}-s{i}-{count}"

    def choices(after: int, count: int) -> list[str]:
        """Value j (> after) as item count+1, when enough values follow it for minItems."""
        out = []
        for j in range(after + 1, n):
            if n - 1 - j < low - (count + 1):
                break
            follow = state(j, count + 1)
            out.append(f"{item[j]} {follow}" if follow in rules else item[j])
        return out

    # Build the states from the last value and the largest count back, so a state is
    # referenced only when it has a way on (or may close the list there).
    for count in range(high, 0, -1):
        for i in range(n - 1, -1, -1):
            more = choices(i, count) if count < high else []
            if not more:
                continue  # the list must (or may only) close after this value
            alternatives = " | ".join(f'"," space {c}' for c in more)
            rules[state(i, count)] = f"({alternatives})?" if count >= low else f"({alternatives})"
    first = choices(-1, 0) if high > 0 else []
    inner = f"({' | '.join(first)})" if first else ""
    if inner and low == 0:
        inner += "?"
    return f'"[" space {inner} "]" space'.replace("  ", " "), rules
