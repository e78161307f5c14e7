"""The accepted code runs breadth-first, depth-first or by A*: every order finds a plan
the domain's own checker accepts, and every order catches code that breaks a rule in
the middle of the search and has it written again."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from test_blocks import GOAL as BLOCKS_GOAL
from test_blocks import MOVE as BLOCKS_MOVE
from test_blocks import SUCC as BLOCKS_SUCC
from test_program_strategy import COMBINE, GOAL, SUCC, fenced

from guardsearch import ScriptedModel
from guardsearch.apps.blocks import BlocksSpace, instance, replay
from guardsearch.apps.blocks.domain import blocks_domain, out_of_place
from guardsearch.apps.game24 import check_answer, parse_numbers, solve_game24
from guardsearch.apps.game24.program import game24_domain, numbers_left
from guardsearch.core.errors import ConfigError
from guardsearch.guards.sandbox import Limits
from guardsearch.search.program_run import SEARCH_ORDERS, run_program
from guardsearch.search.run import search

# Passes every test (no test state is one step from 4 5 6 10, an evaluation row), then
# breaks the rules on the first such state the search expands: one level down.
CHEATS_MID_SEARCH = SUCC.replace(
    "    return out",
    "    below = [sorted(s) for s in successors((4, 5, 6, 10))] if len(state) == 3 else []\n"
    "    return [s + (1,) for s in out] if sorted(state) in below else out",
)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("order", SEARCH_ORDERS)
async def test_every_order_solves_the_game_of_24_with_right_code(order: str) -> None:
    model = ScriptedModel([fenced(GOAL), fenced(COMBINE), fenced(SUCC)])
    result = await solve_game24("4 5 6 10", strategy="program", model=model, search=order)
    assert result["succeeded"] and result["calls"] == 3
    assert check_answer(parse_numbers("4 5 6 10"), result["answer"]) is None


@pytest.mark.parametrize("order", SEARCH_ORDERS)
async def test_every_order_solves_blocks_and_the_plan_replays(order: str) -> None:
    start, goal = instance(1003)
    model = ScriptedModel([fenced(BLOCKS_GOAL), fenced(BLOCKS_MOVE), fenced(BLOCKS_SUCC)])
    result = await search(
        BlocksSpace(start=start, goal=goal), "program", model=model, search=order, cache=False
    )
    assert result.succeeded and result.calls == 3
    assert replay(start, goal, result.answer) is None


@pytest.mark.parametrize("order", SEARCH_ORDERS)
async def test_every_order_catches_a_fault_mid_search_and_has_it_rewritten(order: str) -> None:
    model = ScriptedModel([fenced(GOAL), fenced(COMBINE), fenced(CHEATS_MID_SEARCH), fenced(SUCC)])
    result = await solve_game24(
        "4 5 6 10", strategy="program", model=model, search=order, cache=False
    )
    assert result["succeeded"] and result["calls"] == 4
    assert check_answer(parse_numbers("4 5 6 10"), result["answer"]) is None
    rewrite = "\n".join(m.content for m in model.requests[3].messages)
    assert "At search time" in rewrite and "not a legal move" in rewrite


@pytest.mark.parametrize("order", SEARCH_ORDERS)
async def test_the_fault_is_found_below_the_root_in_every_order(order: str) -> None:
    domain = game24_domain(parse_numbers("4 5 6 10"))
    run = await run_program(
        domain, {"is_goal": GOAL, "successors": CHEATS_MID_SEARCH}, limits=Limits(), order=order
    )
    assert run.fault is not None and run.path is None
    assert run.fault.fn == "successors" and len(run.fault.state) == 3
    assert run.expanded >= 2  # the root was expanded cleanly first


async def test_astar_finds_a_shortest_blocks_plan_and_dfs_a_valid_one() -> None:
    start, goal = instance(1005, blocks=5)
    domain = blocks_domain(start, goal)
    sources = {"is_goal": BLOCKS_GOAL, "successors": BLOCKS_MOVE + "\n" + BLOCKS_SUCC}
    runs = {
        order: await run_program(domain, sources, limits=Limits(), order=order)
        for order in SEARCH_ORDERS
    }
    assert all(r.path is not None and r.fault is None for r in runs.values())
    shortest = len(runs["bfs"].path or [])
    assert len(runs["astar"].path or []) == shortest  # out_of_place never overestimates
    assert len(runs["dfs"].path or []) >= shortest
    assert runs["astar"].expanded <= runs["bfs"].expanded


def test_the_heuristics_read_the_state_alone() -> None:
    goal = (("A", "B", "C"),)
    assert out_of_place(goal, goal) == 0
    assert out_of_place((("A", "C", "B"),), goal) == 2  # C and B must both move
    assert out_of_place((("A",), ("B",), ("C",)), goal) == 2  # A is already in place
    f = parse_numbers
    assert numbers_left(f("24")) == 0 and 1 <= numbers_left(f("4 6")) < 2
    assert numbers_left(f("23 1")) < numbers_left(f("2 1"))  # nearer 24 goes first


async def test_a_bad_search_order_or_astar_without_heuristic_is_refused() -> None:
    model = ScriptedModel([fenced(GOAL), fenced(COMBINE), fenced(SUCC)])
    with pytest.raises(ConfigError, match="search must be one of"):
        await solve_game24("4 5 6 10", strategy="program", model=model, search="idastar")
    domain = game24_domain(parse_numbers("4 5 6 10"))
    bare = dataclasses.replace(domain, heuristic=None)
    with pytest.raises(ConfigError, match="needs a heuristic"):
        await run_program(bare, {"is_goal": GOAL, "successors": SUCC}, limits=Limits(),
                          order="astar")  # fmt: skip
