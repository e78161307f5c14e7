"""Labelled cases for the code guards of the `program` strategy (Game of 24): the
domain's unit tests (guards/code_tests.py CodeGuard, with the tests of
apps/game24/program.py) judging `is_goal`, `combine` and `successors` as the model
might write them.

Each case is a function's source. Right and wrong functions are written here in the
styles and with the faults seen on the embedded models (a `None` for "no division",
no zero check, a missing order of subtraction or division, the pair replaced in
place, slicing that drops the numbers between the pair, pairs skipped), each in many
mechanical variants (the order of the expressions, the names). One shape is code
right everywhere except on inputs the tests may not hold (`special-cased`, keyed on a
start number): the first tests, a few pairs and states, let it pass; tests that cover
every start number do not. (Code wrong only off every tested input passes any finite
test: that is what the strategy's search-time checks are for.)

Labels come from an independent evaluation here, not from the guard: the function
run on every pair of a grid of numbers (whole, 0, negative, fractions) or on every
state reachable from 40 puzzles of the training rows (rows 1-900), compared with
exact arithmetic written in this file.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import Any

from guardbench.cases import Case, balanced
from guardsearch.apps.game24.program import game24_domain
from guardsearch.apps.game24.solve import puzzles
from guardsearch.guards.code_tests import run_cases
from guardsearch.guards.sandbox import Limits

SEED = 1800
ROWS = 900
PER_LABEL = 30
F = Fraction

# -- the independent truth -----------------------------------------------------------

GRID = (F(0), F(1), F(2), F(3), F(7), F(13), F(24), F(-4), F(1, 3), F(5, 2))


def _number(value: Any) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, int | float | Fraction):
        raise TypeError(f"{value!r} is not a number")
    return F(value).limit_denominator(10**9) if isinstance(value, float) else F(value)


def _made(a: Fraction, b: Fraction) -> set[Fraction]:
    out = {a + b, a - b, b - a, a * b}
    if b:
        out.add(a / b)
    if a:
        out.add(b / a)
    return out


def _children(state: tuple[Fraction, ...]) -> set[tuple[Fraction, ...]]:
    out = set()
    for i, j in itertools.combinations(range(len(state)), 2):
        rest = [v for k, v in enumerate(state) if k not in (i, j)]
        out |= {tuple(sorted([*rest, r])) for r in _made(state[i], state[j])}
    return out


def _states(rows: int = 40, seed: int = SEED) -> list[tuple[Fraction, ...]]:
    rng = random.Random(seed)
    starts = [tuple(F(int(n)) for n in p.numbers.split()) for p in puzzles()[:ROWS]]
    seen: set[tuple[Fraction, ...]] = set()
    frontier = [tuple(sorted(s)) for s in rng.sample(starts, rows)]
    while frontier:
        state = frontier.pop()
        if state in seen or len(state) < 2:
            continue
        seen.add(state)
        frontier.extend(_children(state))
    return sorted(seen, key=lambda s: (len(s), s))


def _load(source: str, name: str) -> Any:
    scope: dict[str, Any] = {}
    exec(source, scope)  # our own code, written in this file: never the model's
    return scope[name]


def right_combine(source: str) -> bool:
    fn = _load(source, "combine")
    for a, b in itertools.product(GRID, repeat=2):
        try:
            got = {_number(v) for v in fn(a, b)}
        except Exception:
            return False
        if got != _made(a, b):
            return False
    return True


def right_successors(source: str, states: Sequence[tuple[Fraction, ...]]) -> bool:
    fn = _load(source, "successors")
    for state in states:
        try:
            got = {tuple(sorted(_number(v) for v in child)) for child in fn(state)}
            sizes = {len(child) for child in fn(state)}
        except Exception:
            return False
        if got != _children(state) or sizes != {len(state) - 1}:
            return False
    return True


def right_goal(source: str) -> bool:
    fn = _load(source, "is_goal")
    probes = [(F(24),), (F(48, 2),), (24.0,), (F(23),), (F(-24),), (F(24), F(0))]
    probes += [tuple(s) for s in _states(4)[:200]]
    for state in probes:
        want = len(state) == 1 and F(state[0]) == 24
        try:
            if fn(state) is not want:
                return False
        except Exception:
            return False
    return True


# -- the functions, right and wrong, in variants ------------------------------------

COMBINE_TERMS = ("a + b", "a - b", "b - a", "a * b")


def _combine_list(terms: Sequence[str], zero: str) -> str:
    body = ", ".join(terms)
    if zero == "guard":
        return (
            f"def combine(a, b):\n    out = [{body}]\n    if b != 0:\n        out.append(a / b)\n"
            "    if a != 0:\n        out.append(b / a)\n    return out\n"
        )
    if zero == "none":
        return (
            f"def combine(a, b):\n    return [{body}, a / b if b else None, b / a if a else None]\n"
        )
    if zero == "unguarded":
        return f"def combine(a, b):\n    return [{body}, a / b, b / a]\n"
    if zero == "floor":
        return (
            f"def combine(a, b):\n    out = [{body}]\n    if b != 0:\n        out.append(a // b)\n"
            "    if a != 0:\n        out.append(b // a)\n    return out\n"
        )
    if zero == "one-way":
        return (
            f"def combine(a, b):\n    out = [{body}]\n"
            "    if b != 0:\n        out.append(a / b)\n    return out\n"
        )
    if zero == "special":  # right, except when 13 is one of the numbers
        return (
            f"def combine(a, b):\n    out = [{body}]\n    if b != 0:\n        out.append(a / b)\n"
            "    if a != 0:\n        out.append(b / a)\n"
            "    return out[:-1] if 13 in (a, b) else out\n"
        )
    if zero == "fraction":
        return (
            "from fractions import Fraction\n\n"
            f"def combine(a, b):\n    a, b = Fraction(a), Fraction(b)\n    out = [{body}]\n"
            "    if b:\n        out.append(a / b)\n"
            "    if a:\n        out.append(b / a)\n    return out\n"
        )
    raise ValueError(zero)


def combine_variants(rng: random.Random) -> Iterator[tuple[str, str, str]]:
    """(shape, label, source): every order of the four terms, in turn per shape."""
    orders = list(itertools.permutations(COMBINE_TERMS))
    rng.shuffle(orders)
    shapes = {
        "guarded-list": ("pass", "guard"),
        "fraction-cast": ("pass", "fraction"),
        "none-for-no-division": ("fail", "none"),
        "no-zero-check": ("fail", "unguarded"),
        "floor-division": ("fail", "floor"),
        "one-division-only": ("fail", "one-way"),
        "special-cased": ("fail", "special"),
    }
    for order in orders:
        for shape, (label, zero) in shapes.items():
            yield shape, label, _combine_list(order, zero)
        missing = [t for t in order if t != "b - a"]
        yield "missing-b-minus-a", "fail", _combine_list(missing, "guard")


RIGHT_COMBINE = _combine_list(COMBINE_TERMS, "guard")

_SUCCESSORS = {
    "nested-loops": (
        "pass",
        "def successors(state):\n    out = []\n    for {i} in range(len(state)):\n"
        "        for {j} in range({i} + 1, len(state)):\n"
        "            rest = [state[k] for k in range(len(state)) if k not in ({i}, {j})]\n"
        "            for r in combine(state[{i}], state[{j}]):\n"
        "                out.append(tuple(rest + [r]))\n    return out\n",
    ),
    "itertools-combinations": (
        "pass",
        "import itertools\n\ndef successors(state):\n    out = []\n"
        "    for {i}, {j} in itertools.combinations(range(len(state)), 2):\n"
        "        rest = tuple(v for k, v in enumerate(state) if k not in ({i}, {j}))\n"
        "        out.extend(rest + (r,) for r in combine(state[{i}], state[{j}]))\n"
        "    return out\n",
    ),
    "generator": (
        "pass",
        "def successors(state):\n    for {i} in range(len(state)):\n"
        "        for {j} in range({i} + 1, len(state)):\n"
        "            rest = [state[k] for k in range(len(state)) if k != {i} and k != {j}]\n"
        "            for r in combine(state[{i}], state[{j}]):\n"
        "                yield tuple(rest) + (r,)\n",
    ),
    "pair-replaced-in-place": (
        "fail",
        "def successors(state):\n    out = []\n    for {i} in range(len(state)):\n"
        "        for {j} in range({i} + 1, len(state)):\n"
        "            for r in combine(state[{i}], state[{j}]):\n"
        "                new = list(state)\n                new[{i}] = r\n"
        "                new[{j}] = None\n                out.append(tuple(new))\n    return out\n",
    ),
    "slice-drops-middle": (
        "fail",
        "def successors(state):\n    out = []\n    for {i} in range(len(state)):\n"
        "        for {j} in range({i} + 1, len(state)):\n"
        "            rest = state[:{i}] + state[{j} + 1:]\n"
        "            for r in combine(state[{i}], state[{j}]):\n"
        "                out.append(tuple(rest) + (r,))\n    return out\n",
    ),
    "adjacent-pairs-only": (
        "fail",
        "def successors(state):\n    out = []\n    for {i} in range(len(state) - 1):\n"
        "        {j} = {i} + 1\n"
        "        rest = [state[k] for k in range(len(state)) if k not in ({i}, {j})]\n"
        "        for r in combine(state[{i}], state[{j}]):\n"
        "            out.append(tuple(rest + [r]))\n    return out\n",
    ),
    "result-list-appended": (
        "fail",
        "def successors(state):\n    out = []\n    for {i} in range(len(state)):\n"
        "        for {j} in range({i} + 1, len(state)):\n"
        "            rest = [state[k] for k in range(len(state)) if k not in ({i}, {j})]\n"
        "            out.append(tuple(rest) + (combine(state[{i}], state[{j}]),))\n"
        "    return out\n",
    ),
    "special-cased": (
        "fail",
        "def successors(state):\n    out = []\n    for {i} in range(len(state)):\n"
        "        for {j} in range({i} + 1, len(state)):\n"
        "            rest = [state[k] for k in range(len(state)) if k not in ({i}, {j})]\n"
        "            for r in combine(state[{i}], state[{j}]):\n"
        "                out.append(tuple(rest + [r]))\n"
        "    return out[1:] if 11 in state else out\n",
    ),
}

NAMES = [
    ("i", "j"), ("x", "y"), ("p", "q"), ("first", "second"), ("m", "n"), ("a_i", "b_i"),
    ("left", "right"), ("g", "h"), ("idx1", "idx2"), ("s", "t"),
]  # fmt: skip


def successors_variants(rng: random.Random) -> Iterator[tuple[str, str, str]]:
    names = list(NAMES)
    rng.shuffle(names)
    for i, j in names:
        for shape, (label, text) in _SUCCESSORS.items():
            yield shape, label, text.format(i=i, j=j)


_GOALS = {
    "len-and-value": (
        "pass",
        "def is_goal(state):\n    return len(state) == 1 and state[0] == {t}\n",
    ),
    "abs-tolerance": (
        "pass",
        "def is_goal(state):\n    return len(state) == 1 and abs(state[0] - {t}) < 1e-9\n",
    ),
    "if-chain": (
        "pass",
        "def is_goal(state):\n    if len(state) != 1:\n        return False\n"
        "    return state[0] == {t}\n",
    ),
    "any-number-24": ("fail", "def is_goal(state):\n    return {t} in state\n"),
    "last-number-24": ("fail", "def is_goal(state):\n    return state[-1] == {t}\n"),
    "abs-value": (
        "fail",
        "def is_goal(state):\n    return len(state) == 1 and abs(state[0]) == {t}\n",
    ),
    "sum-is-24": ("fail", "def is_goal(state):\n    return sum(state) == {t}\n"),
}
TARGETS = (
    "24", "24.0", "Fraction(24)", "48 / 2", "(12 * 2)", "int('24')", "Fraction(48, 2)",
    "4 * 6", "(25 - 1)", "3 * 8",
)  # fmt: skip


def goal_variants(rng: random.Random) -> Iterator[tuple[str, str, str]]:
    targets = list(TARGETS)
    rng.shuffle(targets)
    for target in targets:
        for shape, (label, text) in _GOALS.items():
            source = text.format(t=target)
            if "Fraction" in target:
                source = "from fractions import Fraction\n\n" + source
            yield shape, label, source


def _cases(
    guard: str, variants: Iterator[tuple[str, str, str]], truth: Any, rng: random.Random
) -> list[Case]:
    passing, failing = [], []
    for n, (shape, label, source) in enumerate(variants):
        right = truth(source)
        if right != (label == "pass"):
            raise AssertionError(f"{guard} {shape}: labelled {label}, evaluated {right}")
        case = Case(guard, f"{guard}-{n:03d}", label, shape, {"source": source})
        (passing if label == "pass" else failing).append(case)
    return balanced(passing, failing, PER_LABEL, rng)


def combine_cases() -> list[Case]:
    rng = random.Random(SEED)
    return _cases("program-combine", combine_variants(rng), right_combine, rng)


def successors_cases() -> list[Case]:
    rng = random.Random(SEED + 1)
    states = _states()
    return _cases(
        "program-successors",
        successors_variants(rng),
        lambda s: right_successors(RIGHT_COMBINE + "\n\n" + s, states),
        rng,
    )


def goal_cases() -> list[Case]:
    rng = random.Random(SEED + 2)
    return _cases("program-is-goal", goal_variants(rng), right_goal, rng)


# -- the guard's verdict -------------------------------------------------------------


async def judge(case: Case, fn: str) -> bool:
    """The domain's tests for `fn`, in the sandbox, as the strategy runs them (a
    successors module runs after the accepted `combine`)."""
    domain = game24_domain((F(4), F(5), F(6), F(10)))
    source = case.input["source"]
    if fn == "successors":
        source = RIGHT_COMBINE + "\n\n" + source
    verdict = await run_cases(source, domain.function(fn).cases, Limits())
    return verdict.passed
