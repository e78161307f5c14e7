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
# The code the 1.5B writes for lists: change the state in place (each call has its own
# copy) and return it.
MOVE = """
def move(state, i, j):
    block = state[i].pop()
    if j is None:
        state.append([block])
    else:
        state[j].append(block)
    if not state[i]:
        del state[i]
    return state
"""
# Forgets that an emptied stack must go.
KEEPS_EMPTY = MOVE.replace("    if not state[i]:\n        del state[i]\n", "")
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
        feedback=True,
    )
    assert result.succeeded and result.calls == 5
    assert replay(start, goal, result.answer) is None
    move_retry = "\n".join(m.content for m in model.requests[2].messages)
    assert "move([['A', 'B'], ['C']], 1, 0) returned" in move_retry
    assert "[] is not a non-empty stack" in move_retry
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


async def test_code_may_change_the_state_it_is_given() -> None:
    # Each call of the module's own functions gets a copy of its arguments: successors
    # calling a move that pops and appends in place sees the same state every time.
    from guardsearch.apps.blocks.domain import move_cases, successor_case
    from guardsearch.guards.code_tests import run_cases
    from guardsearch.guards.sandbox import Limits

    cases = (*move_cases(), successor_case((("A", "B"), ("C",))))
    verdict = await run_cases(MOVE + SUCC, cases, Limits(), mutable=True)
    assert verdict.passed, verdict.feedback
    # Without the copies, the same code changes the one state successors iterates over.
    verdict = await run_cases(MOVE + SUCC, cases, Limits())
    assert not verdict.passed
