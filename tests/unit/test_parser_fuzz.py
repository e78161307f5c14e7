"""Fuzz: malformed model output never crashes parsing, guarding or a step.

Parsers raise only ParseError, guards always return a GuardResult, and `run_step`
raises only StepFailed. The Game of 24 space's parse + prefilter (+ evaluate, + the
patch it proposes) turns any output into proposals and verdicts, never an exception.
Inputs come from a seeded generator (deterministic, fast) plus hand-made nasty cases
and hypothesis-generated text.
"""

from __future__ import annotations

import contextlib
import functools
import json
import random
import string
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from guardsearch import (
    Artifact,
    Context,
    GuardResult,
    Metered,
    ParseError,
    SchemaGuard,
    ScriptedModel,
    Step,
    StepFailed,
    StepOutcome,
    parse_json,
    run_step,
)
from guardsearch.apps.game24 import Game24Space, parse_numbers
from guardsearch.guards.diff import apply_patch
from guardsearch.guards.parse import parse_text
from guardsearch.search import Proposal
from guardsearch.search.node import Node
from guardsearch.search.run import new_state
from guardsearch.steps.step import make_artifact

SEED = 20261122
N_OUTPUTS = 10_000
STEP_STRIDE = 4
CTX = Context(objective="List the colours of the rainbow as JSON")
COLOURS = {
    "type": "object",
    "properties": {
        "colours": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "count": {"type": "integer", "minimum": 0},
    },
    "required": ["colours"],
}


class Colours(BaseModel):
    colours: list[str]
    count: int = 0


SCHEMA_GUARDS = (SchemaGuard(COLOURS), SchemaGuard(Colours))
JSON_STEP = Step(name="colours", prompt="List them.", schema=COLOURS, rmax=2)
TEXT_STEP = Step(name="free", prompt="Say it.", guard=lambda v: len(v) < 50 or "too long", rmax=2)
PYDANTIC_STEP = Step(name="model", prompt="List them.", schema=Colours, rmax=2)
STEPS = (JSON_STEP, TEXT_STEP, PYDANTIC_STEP)

NASTY = [
    "",
    " \n\t ",
    "{",
    "[",
    "}",
    '{"colours":',
    '{"colours": ["red", "gre',
    '{"colours": ["red"]',
    '{"colours": ["red"]}}',
    '{"colours": ["red"],}',
    "{'colours': ['red']}",
    "[" * 5000,
    "{" * 5000,
    "[" * 5000 + "]" * 5000,
    '{"a":' * 3000,
    '{"colours": ' + "[" * 980 + "]" * 980 + "}",
    "[" * 990 + "]" * 990,
    "[]" * 20_000,
    "}{" * 20_000,
    "{[" * 5000,
    '```json\n{"colours": ["red"]}\n```',
    '```json\n{"colours": ["red"]\n```',
    "```\n```",
    "```json",
    "```" * 500,
    "```json\n" + "[" * 5000 + "\n```",
    'Sure! Here is the JSON:\n```json\n{bad json}\n```\nand also {"colours": []}',
    "\x00\x01\x02\x03\x1b[31m",
    '{"colours": ["\x00"]}',
    '{"colours": ["\\u0000"]}',
    "x" * 1_000_000,
    '"' + "a" * 300_000 + '"',
    '{"colours": ["' + "a" * 150_000 + '"]}',
    "NaN",
    "[NaN, Infinity, -Infinity]",
    '{"colours": ["red"], "count": NaN}',
    '{"colours": ["red"], "count": 1e999999}',
    '{"colours": ["red"], "count": -0}',
    '{"colours": ["red"], "count": 123456789012345678901234567890}',
    "1" * 5000,
    "-",
    "\ud800",
    '"\\ud800"',
    '{"colours": ["\\ud800\\udfff\\ud83d"]}',
    "😀" * 2000,
    '{"colours": ["红", "зелёный", "🟦"]}',
    '\u202e\u200b\ufeff{"colours": ["red"]}',
    "\ufeff",
    "null",
    "true",
    "0",
    '""',
    "[]",
    "{}",
    '{"colours": null}',
    '{"colours": [1, 2, 3]}',
    '{"colours": {"red": true}}',
    '{"colours": [], "count": -1}',
    '{"colours": ["red"]} {"colours": ["blue"]}',
    "\\",
    '"\\',
    '{"\\',
    "\r\n" * 1000,
    " " * 100_000,
]

_JUNK = string.printable + '{}[]":,\\`' * 4 + "\x00\x7f\u00e9\u4e2d\U0001f600\ud800"


def _random_json(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 3.5, 1e308, rng.randrange(-(10**20), 10**20)])
    if kind == 3:
        return "".join(rng.choice(_JUNK) for _ in range(rng.randrange(12)))
    if kind == 4:
        return rng.choice(["red", "green", "blue"])
    if kind == 5:
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(5))]
    if kind == 6:
        return {"colours": [_random_json(rng, depth + 1) for _ in range(rng.randrange(4))]}
    return {
        "".join(rng.choice(string.ascii_letters) for _ in range(rng.randrange(1, 6))): (
            _random_json(rng, depth + 1)
        )
        for _ in range(rng.randrange(4))
    }


def _mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randrange(1, 4)):
        op = rng.randrange(6)
        pos = rng.randrange(len(text) + 1)
        if op == 0:
            text = text[:pos]  # truncated output
        elif op == 1:
            text = text[:pos] + rng.choice(_JUNK) + text[pos:]
        elif op == 2:
            text = text[:pos] + text[pos + 1 :]
        elif op == 3:
            text = text[:pos] + text[pos:][: rng.randrange(20)] * rng.randrange(1, 5) + text[pos:]
        elif op == 4:
            text = f"```json\n{text}\n```" if rng.random() < 0.5 else f"Here it is: {text} Done."
        else:
            deep = rng.random() < 0.02  # rare: each deep one costs milliseconds to reject
            text = rng.choice("[{") * rng.randrange(1, 2000 if deep else 40) + text
    return text


def malformed_outputs(seed: int = SEED, n: int = N_OUTPUTS) -> Iterator[str]:
    """`n` deterministic model outputs: the nasty cases, then random (mostly broken) ones."""
    rng = random.Random(seed)
    yield from NASTY
    for _ in range(n - len(NASTY)):
        kind = rng.randrange(4)
        if kind == 0:
            yield json.dumps(_random_json(rng), ensure_ascii=rng.random() < 0.5)
        elif kind == 1:
            yield _mutate(rng, json.dumps(_random_json(rng)))
        elif kind == 2:
            yield "".join(rng.choice(_JUNK) for _ in range(rng.randrange(200)))
        else:
            yield "".join(chr(rng.randrange(0x110000)) for _ in range(rng.randrange(60)))


def _parses_or_parse_error(parse: Callable[[str], Any], text: str) -> None:
    with contextlib.suppress(ParseError):
        parse(text)


async def _survives_guards_and_artifacts(text: str, variant: int = 0) -> None:
    _parses_or_parse_error(parse_json, text)
    _parses_or_parse_error(parse_text, text)
    unparsed = Artifact(id="fuzz", step="fuzz", text=text)
    schema_guard = SCHEMA_GUARDS[variant % len(SCHEMA_GUARDS)]
    assert isinstance(await schema_guard.check(unparsed, CTX), GuardResult)
    artifact = make_artifact(STEPS[variant % len(STEPS)], text, CTX, attempt=1)
    assert artifact.parse_error is None or artifact.value is None


@functools.cache
def outputs() -> tuple[str, ...]:
    return tuple(malformed_outputs())


def test_the_generator_is_deterministic_and_makes_ten_thousand_outputs() -> None:
    assert len(outputs()) == N_OUTPUTS
    assert outputs() == tuple(malformed_outputs())


async def test_ten_thousand_malformed_outputs_never_crash_parsers_guards_or_artifacts() -> None:
    for variant, text in enumerate(outputs()):
        await _survives_guards_and_artifacts(text, variant)


async def test_malformed_outputs_never_crash_a_step() -> None:
    # Every 4th output: a step call costs a prompt render, which does not depend on the
    # output; all 10,000 go through parsing, guards and make_artifact above.
    some = outputs()[::STEP_STRIDE]
    model = ScriptedModel(some, repeat_last=True)  # the last step may need one more
    finished = 0
    while model.calls < len(some):
        step = STEPS[finished % len(STEPS)]
        try:
            outcome = await run_step(step, CTX, Metered(model))
        except StepFailed as failure:
            assert failure.attempts >= 1
        else:
            assert isinstance(outcome, StepOutcome)
        finished += 1
    assert model.calls >= len(some) == N_OUTPUTS // STEP_STRIDE


@settings(max_examples=300, deadline=None, derandomize=True)
@given(text=st.text(), variant=st.integers(0, 5))
async def test_any_text_never_crashes_parsers_guards_or_artifacts(text: str, variant: int) -> None:
    await _survives_guards_and_artifacts(text, variant)


# -- the Game of 24: parse + prefilter ------------------------------------------------------

GAME24_NASTY = [
    "4 + 6 = 1/0 (left: 5 6 10)",
    '{"steps": ["4 + 6 = 1/0"]}',
    '{"steps": ["1/0 + 4", "4 / 0", "0 / 0 = 0", "4 + 6 = 10 (left: 1/0 5 6)"]}',
    "4 / 0 = 1/0 (left: 1/0 1/0)",
    "4 + 6 = 1/2.5 (left: 5 6 10)",
    "4 + 6 = " + "9" * 5000,
    "9" * 5000 + " * " + "9" * 5000,
    "4 + 6 = 10 (left: " + "1/0 " * 1000 + ")",
    "4 * 6 = -0/1 (left: -0 24)",
    "4 x 5 = 20 (left: )",
    "4 ÷ 0",
    '{"steps": [null, 4, ["4 + 6"], {"a": 4}, "", "4 + 6 = 10 (left: 5"]}',
    '{"steps": "4 + 6"}',
    '["4 + 6", "4 +"]',
]
_G24_NUMS = ["0", "1", "4", "5", "6", "10", "24", "1/0", "0/0", "2/3", "1.5", "1/2.5", "-3", "007"]
_G24_OPS = "+-*/x×÷%^"
G24_SPACES = tuple(
    Game24Space(numbers=parse_numbers(n), constrained=c)
    for n, c in (("4 5 6 10", True), ("0 0 3 8", False), ("2/3 4 4", False), ("24 1", True))
)


def _g24_line(rng: random.Random) -> str:
    a, b, c = (rng.choice(_G24_NUMS) for _ in range(3))
    line = f"{a} {rng.choice(_G24_OPS)} {b}"
    if rng.random() < 0.6:
        line += f" = {c}"
    if rng.random() < 0.5:
        line += " (left: " + " ".join(rng.choices(_G24_NUMS, k=rng.randrange(5))) + ")"
    return _mutate(rng, line) if rng.random() < 0.3 else line


def game24_outputs(seed: int = SEED, n: int = 2_000) -> Iterator[str]:
    """Step-shaped model outputs, mostly wrong: bad numbers, ops, claims, left lists."""
    rng = random.Random(seed)
    yield from GAME24_NASTY
    for _ in range(n - len(GAME24_NASTY)):
        lines = [_g24_line(rng) for _ in range(rng.randrange(1, 5))]
        if rng.random() < 0.5:
            yield json.dumps({"steps": lines})
        else:
            yield "\n".join(f"{i + 1}. {line}" for i, line in enumerate(lines))


async def _game24_survives(text: str, variant: int = 0) -> None:
    """Mirror the engine: parse, prefilter, evaluate when it passed, re-judge a patch."""
    space = G24_SPACES[variant % len(G24_SPACES)]
    root: Node = new_state(space, "dfs").tree.root
    proposals = space.parse(root, text)
    assert proposals
    for proposal in proposals:
        assert isinstance(proposal, Proposal)
        if proposal.parse_error is not None:
            continue
        verdict = await space.prefilter(root, proposal, root.context)
        assert isinstance(verdict, GuardResult)
        if verdict.passed and proposal.state is not None:
            assert isinstance(await space.evaluate(root, proposal, root.context), GuardResult)
        if verdict.patch:
            with contextlib.suppress(ValueError):
                value = apply_patch(proposal.value, verdict.patch)
                again = space.patched(root, proposal, value)
                assert isinstance(await space.prefilter(root, again, root.context), GuardResult)


async def test_malformed_outputs_never_crash_the_game24_parse_and_prefilter() -> None:
    crashes: list[tuple[str, str]] = []
    texts = [*game24_outputs(), *outputs()[::STEP_STRIDE]]
    for variant, text in enumerate(texts):
        try:
            await _game24_survives(text, variant)
        except Exception as exc:
            crashes.append((text[:80], repr(exc)))
    assert crashes == [], f"{len(crashes)} uncaught: {crashes[:5]}"


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    text=st.one_of(
        st.text(),
        st.lists(st.text(alphabet="0123456789/.-+*x÷× =()left:", max_size=40), max_size=4).map(
            lambda steps: json.dumps({"steps": steps})
        ),
    ),
    variant=st.integers(0, 3),
)
async def test_any_text_never_crashes_the_game24_parse_and_prefilter(
    text: str, variant: int
) -> None:
    await _game24_survives(text, variant)
