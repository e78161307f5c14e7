"""Labelled cases for the Game of 24 checks, from the shipped puzzles (rows 1-900
only: rows 901-1100 are the evaluation and held-out ranges of the Game of 24 runs).

- `game24-step` (Game24Space.parse, then objective_checks: the step's numbers are
  left, the arithmetic is exact, a claimed result and numbers-left list are right):
  pass `valid-step` ("4 + 6" in the JSON mode), `valid-step-text` ("4 + 6 = 10
  (left: 8 10 13)"), `valid-fraction-step` (from a state holding a fraction),
  `valid-unicode-op` ("4 × 6"); fail `unavailable-number`, `number-used-twice`,
  `division-by-zero`, `wrong-claimed-result`, `wrong-left-list`, `not-a-step`.
- `game24-final` (arith.check_answer on a final expression): pass `solution`,
  `solution-unicode`; fail `wrong-operator` (another value), `number-swapped` (a
  number not in the puzzle, or one used twice), `subset-24` (24 from three of the
  four numbers).
- `game24-answer-text` (baselines.extract_answer then check_answer, how io/cot/cot-sc
  are scored): pass `answer-line`, `steps-then-answer`; fail `answer-line-wrong`,
  `no-answer`.

Labels come from a separate exact evaluation here (Fractions on the numbers as
written), and the exhaustive solver is used only to make right answers (it is the
scoring oracle, never guidance).
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from guardbench.cases import Case, balanced
from guardsearch.apps.game24.arith import (
    Item,
    apply_step,
    check_answer,
    parse_numbers,
    show,
    solvable,
    strip_parens,
)
from guardsearch.apps.game24.arith import state_of as _state
from guardsearch.apps.game24.baselines import extract_answer
from guardsearch.apps.game24.solve import puzzles
from guardsearch.apps.game24.space import Game24Space
from guardsearch.search.node import Node

SEED = 2400
ROWS = 900
OPS = ("+", "-", "*", "/")


def _value(expr: str) -> tuple[Fraction, list[Fraction]]:
    """The exact value of `expr` and the numbers it uses (independent of arith.py)."""
    used = [Fraction(n) for n in re.findall(r"\d+", expr)]
    code = re.sub(r"\d+", lambda m: f"F({m.group(0)})", expr.replace("×", "*").replace("÷", "/"))
    return eval(code, {"F": Fraction, "__builtins__": {}}), used


def _right(numbers: Sequence[Fraction], expr: str) -> bool:
    try:
        value, used = _value(expr)
    except ZeroDivisionError:
        return False
    return value == 24 and Counter(used) == Counter(numbers)


def _pool(rng: random.Random, n: int) -> list[tuple[Fraction, ...]]:
    rows = puzzles()[:ROWS]
    return [parse_numbers(p.numbers) for p in rng.sample(rows, n)]


def _calc(a: Fraction, op: str, b: Fraction) -> Fraction | None:
    if op == "/" and b == 0:
        return None
    return {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else Fraction(0)}[op]


def _left(state: Sequence[Fraction], a: Fraction, b: Fraction) -> list[Fraction] | None:
    rest = list(state)
    for x in (a, b):
        if x not in rest:
            return None
        rest.remove(x)
    return rest


def step_cases() -> list[Case]:
    rng = random.Random(SEED)
    passing: list[Case] = []
    failing: list[Case] = []
    for i, numbers in enumerate(_pool(rng, 150)):
        state = list(numbers)
        if i % 3 == 0:  # a state one step in, often holding a fraction
            a, b = state[0], state[1]
            state = [*state[2:], a / b if b else a + b]
        x, y = rng.sample(range(len(state)), 2)
        a, b = state[x], state[y]
        op = rng.choice(OPS)
        made = _calc(a, op, b)
        if made is None:
            op, made = "+", a + b
        rest = _left(state, a, b)
        assert rest is not None
        left = " ".join(show(v) for v in sorted([*rest, made]))
        fraction = any(v.denominator != 1 for v in state)
        good = "valid-fraction-step" if fraction else "valid-step"
        shown = f"{show(a)} {op} {show(b)}"
        passing.append(_step(good, i, state, {"steps": [shown]}))
        passing.append(_step("valid-step-text", i, state, f"{shown} = {show(made)} (left: {left})"))
        if op == "*":
            passing.append(_step("valid-unicode-op", i, state, f"{show(a)} × {show(b)}"))
        missing = next(v for v in range(1, 14) if Fraction(v) not in state)
        failing.append(_step("unavailable-number", i, state, {"steps": [f"{show(a)} + {missing}"]}))
        once = [v for v in state if state.count(v) == 1]
        if once:
            v = show(once[0])
            failing.append(_step("number-used-twice", i, state, {"steps": [f"{v} * {v}"]}))
        wrong = made + rng.choice((1, 2, -1))
        failing.append(
            _step("wrong-claimed-result", i, state, f"{shown} = {show(wrong)} (left: {left})")
        )
        bad_left = " ".join(show(v) for v in sorted([*rest, made + 1]))
        failing.append(
            _step("wrong-left-list", i, state, f"{shown} = {show(made)} (left: {bad_left})")
        )
        failing.append(_step("not-a-step", i, state, f"combine {show(a)} and {show(b)}"))
        if len(state) >= 3 and state.count(state[0]) == 1:
            zero_state = [*state[1:], Fraction(0)]
            failing.append(
                _step("division-by-zero", i, zero_state, {"steps": [f"{show(state[1])} / 0"]})
            )
    return balanced(passing, failing, 60, rng)


def _step(shape: str, i: int, state: Sequence[Fraction], output: Any) -> Case:
    label = "pass" if shape.startswith("valid") else "fail"
    return Case(
        guard="game24-step",
        id=f"{shape}-{i:03d}",
        label=label,  # type: ignore[arg-type]
        shape=shape,
        input={"numbers": [show(v) for v in state], "output": output},
    )


def final_cases() -> list[Case]:
    rng = random.Random(SEED + 1)
    passing: list[Case] = []
    failing: list[Case] = []
    for i, numbers in enumerate(_pool(rng, 120)):
        found = solvable(numbers)
        if found is None:
            continue
        expr = strip_parens(found)
        shown = [show(n) for n in numbers]
        variants = {"solution": expr, "solution-unicode": expr.replace("*", "×")}
        ops = [m.start() for m in re.finditer(r" [-+*/] ", expr)]
        pos = rng.choice(ops)
        swapped = (
            expr[: pos + 1] + rng.choice([o for o in OPS if o != expr[pos + 1]]) + expr[pos + 2 :]
        )
        variants["wrong-operator"] = swapped
        digits = list(re.finditer(r"\d+", expr))
        hit = rng.choice(digits)
        other = next(str(v) for v in range(1, 14) if str(v) != hit.group(0))
        variants["number-swapped"] = expr[: hit.start()] + other + expr[hit.end() :]
        for j in range(4):
            three = numbers[:j] + numbers[j + 1 :]
            part = solvable(three)
            if part is not None:
                variants["subset-24"] = strip_parens(part)
                break
        for shape, text in variants.items():
            label = "pass" if _right(numbers, text) else "fail"
            if label == "pass" and not shape.startswith("solution"):
                continue  # a mutation that happens to stay right is no fail case
            case = Case(
                guard="game24-final",
                id=f"{shape}-{i:03d}",
                label=label,  # type: ignore[arg-type]
                shape=shape,
                input={"numbers": shown, "expression": text},
            )
            (passing if label == "pass" else failing).append(case)
    return balanced(passing, failing, 50, rng)


def answer_text_cases() -> list[Case]:
    rng = random.Random(SEED + 2)
    passing: list[Case] = []
    failing: list[Case] = []
    for i, numbers in enumerate(_pool(rng, 100)):
        found = solvable(numbers)
        if found is None:
            continue
        expr = strip_parens(found)
        shown = " ".join(show(n) for n in numbers)
        steps = _steps_of(numbers, found)
        wrong = expr.replace("+", "-", 1) if "+" in expr else expr.replace("*", "+", 1)
        variants = {
            "answer-line": f"Answer: {expr} = 24",
            "steps-then-answer": f"Input: {shown}\nSteps:\n{steps}\nAnswer: {expr} = 24",
            "answer-line-wrong": f"Answer: {wrong} = 24",
            "no-answer": f"Input: {shown}\nSteps:\n{steps}",
        }
        for shape, text in variants.items():
            answer = re.search(r"Answer: (.*) = 24", text)
            right = answer is not None and _right(numbers, answer.group(1))
            label = "pass" if right else "fail"
            case = Case(
                guard="game24-answer-text",
                id=f"{shape}-{i:03d}",
                label=label,  # type: ignore[arg-type]
                shape=shape,
                input={"numbers": shown, "text": text},
            )
            (passing if right else failing).append(case)
    return balanced(passing, failing, 50, rng)


def _steps_of(numbers: Sequence[Fraction], expr: str) -> str:
    """ToT-style step lines for a solver expression (the innermost pairs first)."""
    lines = []
    items = [Item(n, show(n)) for n in numbers]
    pattern = re.compile(r"\((-?\d+(?:/\d+)?) ([-+*/]) (-?\d+(?:/\d+)?)\)")
    text = expr
    while (m := pattern.search(text)) is not None:
        a, op, b = Fraction(m.group(1)), m.group(2), Fraction(m.group(3))
        items = apply_step(items, a, op, b)
        made = items[-1].value
        left = " ".join(show(it.value) for it in items)
        lines.append(f"{m.group(1)} {op} {m.group(3)} = {show(made)} (left: {left})")
        text = text[: m.start()] + show(made) + text[m.end() :]
    return "\n".join(lines)


# -- judging -----------------------------------------------------------------------------


def judge_step(case: Case) -> bool:
    numbers = tuple(Fraction(v) for v in case.input["numbers"])
    space = Game24Space(numbers=numbers)
    items = [Item(v, show(v)) for v in numbers]
    root = space.root()
    node = Node(id="n", parent=None, depth=0, state=_state(items), key="n", context=root.context)
    output = case.input["output"]
    text = output if isinstance(output, str) else json.dumps(output)
    proposals = space.parse(node, text)
    if not proposals or any(p.parse_error for p in proposals):
        return False
    return all(space.objective_checks(node, p).passed for p in proposals)


def judge_final(case: Case) -> bool:
    numbers = [Fraction(v) for v in case.input["numbers"]]
    return check_answer(numbers, case.input["expression"]) is None


def judge_answer_text(case: Case) -> bool:
    answer = extract_answer(case.input["text"])
    return answer is not None and check_answer(parse_numbers(case.input["numbers"]), answer) is None
