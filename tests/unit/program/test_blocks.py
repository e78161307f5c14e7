"""BlocksWorld, the second program domain: generated instances, the validator, and a
scripted model's code solving an instance whose plan replays to the goal."""

from __future__ import annotations

from pathlib import Path

import pytest

from guardsearch import ScriptedModel
from guardsearch.apps.blocks import BlocksSpace, instance, replay
from guardsearch.apps.blocks.domain import legal, move_to, successors
from guardsearch.core.errors import ConfigError
from guardsearch.registry import build_app
from guardsearch.search.run import search

GOAL = "def is_goal(state, goal):\n    return sorted(state) == sorted(goal)\n"
MOVE = """
def move(state, i, j):
    block, left = state[i][-1], state[i][:-1]
    stacks = []
    for k, stack in enumerate(state):
        if k == i:
            if left:
                stacks.append(left)
        elif k == j:
            stacks.append(stack + block)
        else:
            stacks.append(stack)
    if j is None:
        stacks.append(block)
    return tuple(stacks)
"""
# Mutates a list copy but forgets that the emptied stack must go.
KEEPS_EMPTY = MOVE.replace(
    "            if left:\n                stacks.append(left)", "            stacks.append(left)"
)
SUCC = """
def successors(state):
    out = []
    for i in range(len(state)):
        for j in range(len(state)):
            if j != i:
                out.append(move(state, i, j))
        if len(state[i]) > 1:
            out.append(move(state, i, None))
    return out
"""
# Forgets the moves onto the table: fails completeness.
NO_TABLE = SUCC.replace(
    "        if len(state[i]) > 1:\n            out.append(move(state, i, None))\n", ""
)


def fenced(code: str) -> str:
    return f"```python\n{code}```"


def test_the_validator_knows_every_move() -> None:
    state = (("A", "B"), ("C",))
    assert successors(state) == {
        (("A",), ("B",), ("C",)),
        (("A",), ("C", "B")),
        (("A", "B", "C"),),
    }
    # The validator's own move(state, i, j) makes exactly those states.
    made = {move_to(state, i, j) for i in range(2) for j in (None, 1 - i)}
    assert made == successors(state) | {move_to(state, 1, None)}
    assert move_to(state, 1, None) == (("A", "B"), ("C",))  # C alone: the same stacks
    assert legal(state, [["A", "B", "C"]]) is None
    assert legal(state, [["C", "A", "B"]]) is not None


def test_instances_are_reproducible_and_plans_replay() -> None:
    start, goal = instance(1000)
    assert instance(1000) == (start, goal) and start != goal
    assert replay((("A", "B"),), (("A",), ("B",)), ["move B onto table"]) is None
    assert "not a legal move" in (replay((("A", "B"),), (("A", "B"),), ["move A onto B"]) or "")


async def test_a_scripted_program_solves_an_instance(tmp_path: Path) -> None:
    start, goal = instance(1001)
    model = ScriptedModel(
        [fenced(GOAL), fenced(KEEPS_EMPTY), fenced(MOVE), fenced(NO_TABLE), fenced(SUCC)]
    )
    result = await search(
        BlocksSpace(start=start, goal=goal),
        "program",
        model=model,
        cache_dir=str(tmp_path),
        samples=1,  # each function's second call is a retry, which carries the failing test
    )
    assert result.succeeded and result.calls == 5
    assert replay(start, goal, result.answer) is None
    move_retry = "\n".join(m.content for m in model.requests[2].messages)
    assert "move(('AB', 'C'), 1, 0)" in move_retry
    assert "is not a non-empty stack" in move_retry
    succ_prompt = model.requests[3].messages[-1].content
    assert "def move(state, i, j):" in succ_prompt  # written over the accepted move
    retry = "\n".join(m.content for m in model.requests[4].messages)
    assert "successors are missing" in retry


def test_the_app_is_served_by_program_only() -> None:
    setup = build_app("blocks", {"seed": 1002}, "program")
    assert isinstance(setup.space, BlocksSpace)
    with pytest.raises(ConfigError, match="program"):
        build_app("blocks", {"seed": 1002}, "dfs")
    with pytest.raises(ConfigError):
        build_app("blocks", {"blocks": 100}, "program")
    with pytest.raises(ConfigError, match="single letters"):
        build_app("blocks", {"start": [["AB", "C"]], "goal": [["C", "AB"]]}, "program")


async def test_code_that_changes_a_tuple_is_told_how_to_build_one() -> None:
    # Seen on the 1.5B: `.pop()` on a stack, eleven answers running; the verdict names
    # the way out, not only the AttributeError.
    from guardsearch.apps.blocks.domain import move_cases
    from guardsearch.guards.code_tests import run_cases
    from guardsearch.guards.sandbox import Limits

    pops = "def move(state, i, j):\n    block = state[i].pop()\n    return state\n"
    verdict = await run_cases(pops, move_cases(), Limits())
    assert "'str' object has no attribute 'pop'" in verdict.feedback
    assert "cannot be changed: build a new one, e.g. t[:-1]" in verdict.feedback
