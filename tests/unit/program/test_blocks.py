"""BlocksWorld, the second program domain: generated instances, the validator, and a
scripted model's code solving an instance whose plan replays to the goal."""

from __future__ import annotations

from pathlib import Path

import pytest

from guardsearch import ScriptedModel
from guardsearch.apps.blocks import BlocksSpace, instance, replay
from guardsearch.apps.blocks.domain import legal, successors
from guardsearch.core.errors import ConfigError
from guardsearch.registry import build_app
from guardsearch.search.run import search

GOAL = "def is_goal(state, goal):\n    return sorted(state) == sorted(goal)\n"
SUCC = """
def successors(state):
    out = []
    for i, stack in enumerate(state):
        block = stack[-1]
        rest = [s for k, s in enumerate(state) if k != i]
        left = stack[:-1]
        for j, other in enumerate(rest):
            new = [s for k, s in enumerate(rest) if k != j] + [other + (block,)]
            if left:
                new.append(left)
            out.append(tuple(new))
        if left:
            out.append(tuple(rest + [left, (block,)]))
    return out
"""
# Forgets the moves onto the table: fails completeness.
TABLE_MOVE = "        if left:\n            out.append(tuple(rest + [left, (block,)]))\n"
NO_TABLE = SUCC.replace(TABLE_MOVE, "")


def fenced(code: str) -> str:
    return f"```python\n{code}```"


def test_the_validator_knows_every_move() -> None:
    state = (("A", "B"), ("C",))
    assert successors(state) == {
        (("A",), ("B",), ("C",)),
        (("A",), ("C", "B")),
        (("A", "B", "C"),),
    }
    assert legal(state, [["A", "B", "C"]]) is None
    assert legal(state, [["C", "A", "B"]]) is not None


def test_instances_are_reproducible_and_plans_replay() -> None:
    start, goal = instance(1000)
    assert instance(1000) == (start, goal) and start != goal
    assert replay((("A", "B"),), (("A",), ("B",)), ["move B onto table"]) is None
    assert "not a legal move" in (replay((("A", "B"),), (("A", "B"),), ["move A onto B"]) or "")


async def test_a_scripted_program_solves_an_instance(tmp_path: Path) -> None:
    start, goal = instance(1001)
    model = ScriptedModel([fenced(GOAL), fenced(NO_TABLE), fenced(SUCC)])
    result = await search(
        BlocksSpace(start=start, goal=goal),
        "program",
        model=model,
        cache_dir=str(tmp_path),
        samples=1,  # the third call is a retry, which carries the failing test
    )
    assert result.succeeded and result.calls == 3
    assert replay(start, goal, result.answer) is None
    retry = "\n".join(m.content for m in model.requests[2].messages)
    assert "successors are missing" in retry


def test_the_app_is_served_by_program_only() -> None:
    setup = build_app("blocks", {"seed": 1002}, "program")
    assert isinstance(setup.space, BlocksSpace)
    with pytest.raises(ConfigError, match="program"):
        build_app("blocks", {"seed": 1002}, "dfs")
    with pytest.raises(ConfigError):
        build_app("blocks", {"blocks": 100}, "program")
