"""Exact arithmetic for the Game of 24: numbers, steps, expressions (Fractions only).

`apply_step` is the objective check of one step; `check_answer` verifies a final
expression (each input number exactly once, value exactly 24). `steps_over` lists the
steps a state allows (what the proposer's grammar is built from) and `pair_to_24` is
the one-step check of a two-number state (can `a op b` make 24?): both look one step
ahead and no further. `solvable` is an exhaustive solver used *only as the scoring
oracle* (benchmarks, tests): no search method consults it for guidance.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

TARGET = Fraction(24)
OPS = ("+", "-", "*", "/")


class StepError(ValueError):
    """A step that breaks the rules; the message is feedback for the model."""


# Numbers come from people and from the model: their size is checked on the text,
# before any conversion, so that "1e10000000" is refused at once instead of costing
# minutes of CPU (Fraction would build 10**10000000 first).
MAX_DIGITS = 15
MAX_EXPONENT = 15
_DECIMAL = re.compile(r"[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?", re.ASCII)
_RATIO = re.compile(r"[+-]?(\d+)/(\d+)", re.ASCII)


def parse_number(text: str) -> Fraction:
    """'4', '-3', '2/3', '1.5', '1e3' -> Fraction; raises StepError otherwise.

    ASCII digits only, at most `MAX_DIGITS` digits in each part and an exponent of at
    most `MAX_EXPONENT`: anything larger is not a number of this game.
    """
    text = text.strip()
    ratio = _RATIO.fullmatch(text)
    decimal = None if ratio else _DECIMAL.fullmatch(text)
    if ratio:
        parts, exponent = ratio.groups(), "0"
    elif decimal and (decimal[1] or decimal[2]):
        parts, exponent = (decimal[1], decimal[2] or ""), decimal[3] or "0"
    else:
        raise StepError(f"{text[:40]!r} is not a number")
    if any(len(p) > MAX_DIGITS for p in parts):
        raise StepError(f"{text[:40]!r} has too many digits (at most {MAX_DIGITS})")
    if len(exponent.lstrip("+-")) > 3 or abs(int(exponent)) > MAX_EXPONENT:
        raise StepError(f"{text[:40]!r}: the exponent is out of range (at most {MAX_EXPONENT})")
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError) as exc:
        raise StepError(f"{text[:40]!r} is not a number") from exc


def show(x: Fraction) -> str:
    """A number the way the prompts write it: '4', '-3', '2/3'."""
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def parse_numbers(text: str) -> tuple[Fraction, ...]:
    """'4 5 6 10' (spaces or commas) -> numbers."""
    parts = text.replace(",", " ").split()
    if not parts:
        raise StepError("no numbers given")
    return tuple(parse_number(p) for p in parts)


def calc(a: Fraction, op: str, b: Fraction) -> Fraction:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        if b == 0:
            raise StepError("division by zero")
        return a / b
    raise StepError(f"unknown operator {op!r}; use + - * /")


@dataclass(frozen=True)
class Item:
    """A number still available, with the expression that made it from the inputs."""

    value: Fraction
    expr: str


def left_after(items: Sequence[Item], a: Fraction, b: Fraction) -> tuple[list[Item], Item, Item]:
    """Remove one `a` and one `b` from `items`; StepError if they are not available."""
    rest = list(items)
    taken: list[Item] = []
    have = " ".join(show(it.value) for it in items)
    for want in (a, b):
        index = next((i for i, it in enumerate(rest) if it.value == want), None)
        if index is None:
            if any(it.value == want for it in items):
                raise StepError(
                    f"uses {show(want)} twice but only one {show(want)} is left ({have})"
                )
            raise StepError(f"{show(want)} is not among the numbers left ({have})")
        taken.append(rest.pop(index))
    return rest, taken[0], taken[1]


def apply_step(items: Sequence[Item], a: Fraction, op: str, b: Fraction) -> list[Item]:
    """The numbers left after `a op b`, the result appended; StepError if invalid."""
    rest, ia, ib = left_after(items, a, b)
    value = calc(a, op, b)
    return [*rest, Item(value, f"({ia.expr} {op} {ib.expr})")]


def steps_over(values: Sequence[Fraction]) -> list[tuple[Fraction, str, Fraction]]:
    """Every step `(a, op, b)` the numbers `values` allow, each written once.

    Two equal numbers make one pair; `+` and `*` are written smaller number first (the
    order the prompt lists the numbers in), `-` and `/` both ways; no division by zero.
    """
    distinct = sorted(set(values))
    count = Counter(values)
    out: list[tuple[Fraction, str, Fraction]] = []
    for i, a in enumerate(distinct):
        for b in distinct[i:]:
            if a == b and count[a] < 2:
                continue
            out += [(a, "+", b), (a, "*", b), (a, "-", b)]
            if b != 0:
                out.append((a, "/", b))
            if a != b:
                out.append((b, "-", a))
                if a != 0:
                    out.append((b, "/", a))
    return out


def pair_to_24(a: Fraction, b: Fraction) -> str | None:
    """The step `a op b` that makes 24 from the two numbers left, or None.

    The exact check of a two-number state: six results, no search below them."""
    for x, op, y in ((a, "+", b), (a, "*", b), (a, "-", b), (b, "-", a), (a, "/", b), (b, "/", a)):
        if not (op == "/" and y == 0) and calc(x, op, y) == TARGET:
            return f"{show(x)} {op} {show(y)}"
    return None


def pair_results(a: Fraction, b: Fraction) -> list[Fraction]:
    """The distinct numbers one step makes from `a` and `b` (what a dead pair reaches)."""
    made = [calc(x, op, y) for x, op, y in steps_over([a, b])]
    return sorted(set(made))


def sort_items(items: Iterable[Item]) -> list[Item]:
    return sorted(items, key=lambda it: (it.value, it.expr))


def state_of(items: Sequence[Item]) -> dict[str, Any]:
    """A search state: the numbers left, each with the expression that made it."""
    return {"left": [[show(it.value), it.expr] for it in sort_items(items)]}


def step_line(a: str, op: str, b: str, items: Sequence[Item]) -> str:
    """A step as the path shows it: `a op b = c (left: ...)`."""
    made = items[-1].value if items else Fraction(0)
    left = " ".join(show(it.value) for it in sort_items(items))
    return f"{a} {op} {b} = {show(made)} (left: {left})"


def strip_parens(expr: str) -> str:
    if expr.startswith("(") and expr.endswith(")"):
        depth = 0
        for i, ch in enumerate(expr):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(expr) - 1:
                return expr
        return expr[1:-1]
    return expr


_BINOPS: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
}


def evaluate(expr: str) -> tuple[Fraction, list[Fraction]]:
    """Value of an arithmetic expression (exact) and the numbers it uses, in order."""
    try:
        tree = ast.parse(expr.replace("×", "*").replace("÷", "/"), mode="eval")
    except SyntaxError as exc:
        raise StepError(f"not an arithmetic expression: {expr!r}") from exc
    used: list[Fraction] = []

    def walk(node: ast.AST) -> Fraction:
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return calc(walk(node.left), _BINOPS[type(node.op)], walk(node.right))
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, int)
            and not isinstance(node.value, bool)
        ):
            used.append(Fraction(node.value))
            return Fraction(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        raise StepError(f"only numbers and + - * / are allowed, got {ast.dump(node)[:40]}")

    return walk(tree.body), used


def check_answer(numbers: Sequence[Fraction], expr: str) -> str | None:
    """None if `expr` uses each input exactly once and equals 24; else why not."""
    try:
        value, used = evaluate(expr)
    except StepError as exc:
        return str(exc)
    if Counter(used) != Counter(numbers):
        want = " ".join(show(n) for n in numbers)
        got = " ".join(show(n) for n in used)
        return f"must use each of {want} exactly once, uses {got}"
    if value != TARGET:
        return f"{expr} = {show(value)}, not 24"
    return None


def solvable(numbers: Sequence[Fraction]) -> str | None:
    """SCORING ORACLE ONLY: an expression reaching 24, by exhaustive search, or None."""
    items = [Item(n, show(n)) for n in numbers]

    def go(items: list[Item]) -> str | None:
        if len(items) == 1:
            return strip_parens(items[0].expr) if items[0].value == TARGET else None
        for i, j in itertools.permutations(range(len(items)), 2):
            rest = [it for k, it in enumerate(items) if k not in (i, j)]
            for op in OPS:
                try:
                    value = calc(items[i].value, op, items[j].value)
                except StepError:
                    continue
                found = go([*rest, Item(value, f"({items[i].expr} {op} {items[j].expr})")])
                if found:
                    return found
        return None

    return go(items)
