"""The Game of 24 app: exact arithmetic, objective guards, the space, and solve_game24."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from importlib import resources

import pytest

from guardsearch import ConfigError, ModelRequest, ScriptedModel
from guardsearch.apps.game24 import (
    Game24Space,
    check_answer,
    parse_numbers,
    puzzles,
    solvable,
    solve_game24,
    solve_game24_sync,
    step_schema,
)
from guardsearch.apps.game24.arith import Item, StepError, apply_step
from guardsearch.search import search
from guardsearch.search.run import new_state

NUMS = parse_numbers("4 5 6 10")


def numbers_in(request: ModelRequest) -> list[str]:
    match = re.search(r"Input: ([^\n]*)", request.messages[-1].content)
    assert match
    return match.group(1).split()


def proposer(table: dict[str, list[str]]) -> ScriptedModel:
    """Answers {"steps": [...]} looked up by the numbers left (sorted, space-joined)."""
    return ScriptedModel(
        lambda r: json.dumps({"steps": table.get(" ".join(numbers_in(r)), ["4 + 5"])})
    )


WINNING = {
    "4 5 6 10": ["5 * 6", "4 + 5"],
    "6 9 10": ["6 + 9"],
    "10 15": ["10 + 15", "15 - 10"],
    "4 10 30": ["30 - 10"],
    "4 20": ["20 - 4", "4 + 20"],
}


# -- arithmetic and data ------------------------------------------------------------------


def test_a_step_must_use_numbers_that_are_left() -> None:
    items = [Item(Fraction(n), str(n)) for n in (4, 5, 6)]
    with pytest.raises(StepError, match="7 is not among the numbers left"):
        apply_step(items, Fraction(7), "+", Fraction(4))
    with pytest.raises(StepError, match="uses 4 twice but only one 4 is left"):
        apply_step(items, Fraction(4), "+", Fraction(4))
    with pytest.raises(StepError, match="division by zero"):
        apply_step([Item(Fraction(0), "0"), *items], Fraction(4), "/", Fraction(0))


def test_arithmetic_is_exact() -> None:
    items = [Item(Fraction(n), str(n)) for n in (1, 3, 4, 6)]
    after = apply_step(items, Fraction(1), "/", Fraction(4))
    assert Fraction(1, 4) in [it.value for it in after]
    assert check_answer(parse_numbers("1 3 4 6"), "6 / (1 - 3 / 4)") is None


def test_the_final_check_wants_each_input_once_and_exactly_24() -> None:
    assert check_answer(NUMS, "(5 * 4) + (10 - 6)") is None
    assert "exactly once" in (check_answer(NUMS, "4 * 6") or "")
    assert "not 24" in (check_answer(NUMS, "4 + 5 + 6 + 10") or "")
    assert "only numbers" in (check_answer(NUMS, "__import__('os')") or "")


def test_the_puzzles_ship_in_the_package_with_attribution() -> None:
    data = puzzles()
    assert len(data) == 1362
    assert data[0].numbers == "1 1 4 6" and data[-1].rank == 1362
    folder = resources.files("guardsearch.apps.game24").joinpath("data")
    note = folder.joinpath("ATTRIBUTION.md").read_text("utf-8")
    assert "MIT" in note and "Shunyu Yao" in note and "src/tot/data/24/24.csv" in note


def test_the_scoring_oracle_solves_a_known_puzzle() -> None:
    answer = solvable(NUMS)
    assert answer is not None and check_answer(NUMS, answer) is None
    assert solvable(parse_numbers("1 1 1 1")) is None


# -- the space --------------------------------------------------------------------------------


def space() -> Game24Space:
    return Game24Space(numbers=NUMS)


def test_the_grammar_allows_only_the_numbers_left() -> None:
    schema = step_schema([Fraction(4), Fraction(10), Fraction(2, 3)], 6, 4)
    items = schema["properties"]["steps"]
    assert items["items"]["pattern"] == "^(2/3|10|4) [-+*/] (2/3|10|4)$"
    assert (items["minItems"], items["maxItems"]) == (4, 6)


def test_the_proposer_prompt_pins_the_goal_and_is_constrained() -> None:
    sp = space()
    root = new_state(sp, "dfs").tree.root
    request = sp.request(root, root.context, seed=0, temperature=0.0)
    assert request.messages[0].content.startswith("Primary objective: Use the numbers 4 5 6 10")
    assert request.json_schema is not None
    assert request.messages[-1].content.endswith("Input: 4 5 6 10\nPossible next steps:")


def test_without_a_grammar_the_prompt_asks_for_tot_style_lines() -> None:
    sp = Game24Space(numbers=NUMS, constrained=False)
    root = new_state(sp, "dfs").tree.root
    request = sp.request(root, root.context, seed=0, temperature=0.0)
    assert request.json_schema is None and request.max_tokens == 2 * sp.max_tokens
    assert '"a op b = c (left: numbers left)"' in request.messages[0].content
    assert "JSON" not in request.messages[0].content
    assert request.messages[-1].content.endswith("Input: 4 5 6 10\nPossible next steps:")


def test_proposals_are_read_from_json_or_from_tot_style_lines() -> None:
    sp = space()
    root = new_state(sp, "dfs").tree.root
    from_json = sp.parse(root, '{"steps": ["4 + 6", "10 / 5"]}')
    assert [p.text for p in from_json] == ["4 + 6 = 10 (left: 5 10 10)", "10 / 5 = 2 (left: 2 4 6)"]
    lines = "1. 4 + 6 = 10 (left: 5 10 10)\n- 10 - 4 = 6 (left: 5 6 6)\nthat is all"
    assert [p.value["op"] for p in sp.parse(root, lines)] == ["+", "-"]
    garbage = sp.parse(root, "I think 24 is nice")
    assert garbage[0].parse_error is not None


async def test_a_wrong_claimed_result_is_repaired_by_a_json_patch() -> None:
    sp = Game24Space(numbers=NUMS, constrained=False)
    model = ScriptedModel(lambda r: "4 + 6 = 11 (left: 5 6 11)")
    result = await search(sp, "bfs", model=model, max_expansions=1)
    child = next(n for n in result.tree if n.parent)
    assert child.status == "open"
    assert child.value["c"] == "10" and child.value["left"] == ["5", "10", "10"]
    assert child.text == "4 + 6 = 10 (left: 5 10 10)"
    assert result.trace.of_kind("patch_applied")[0].data["passed"] is True


@pytest.mark.parametrize("output", ["4 + 6 = 1/0 (left: 5 6 10)", '{"steps": ["4 + 6 = 1/0"]}'])
async def test_a_malformed_claimed_result_is_feedback_not_a_crash(output: str) -> None:
    sp = Game24Space(numbers=NUMS, constrained=False)
    root = new_state(sp, "dfs").tree.root
    (proposal,) = sp.parse(root, output)
    verdict = sp.objective_checks(root, proposal)
    assert not verdict.passed and "not 1/0" in verdict.feedback
    arithmetic = next(c for c in verdict.checks if c.name == "exact arithmetic")
    assert not arithmetic.passed and arithmetic.hard
    assert {"op": "replace", "path": "/c", "value": "10"} in (verdict.patch or ())
    out = await solve_game24("4 5 6 10", model=ScriptedModel([output], repeat_last=True), budget=3)
    assert out["succeeded"] is False and out["calls"] <= 3


async def test_an_unavailable_number_is_pruned_by_the_prefilter() -> None:
    result = await search(space(), "bfs", model=proposer({"4 5 6 10": ["4 * 7"]}), max_expansions=1)
    bad = next(n for n in result.tree if n.parent)
    assert bad.pruned and "7 is not among the numbers left" in bad.verdict.feedback  # type: ignore[union-attr]


async def test_the_same_numbers_reached_twice_are_judged_once() -> None:
    # 4 + 6 and 6 + 4 leave the same numbers: the second is a duplicate.
    result = await search(
        space(), "bfs", model=proposer({"4 5 6 10": ["4 + 6", "6 + 4", "10 - 4"]}), max_expansions=1
    )
    assert len([n for n in result.tree if n.parent]) == 2
    assert len(result.trace.of_kind("candidate_dropped")) == 1


def test_numbers_that_divide_24_score_higher_than_fractions() -> None:
    from guardsearch.apps.game24.space import plausibility

    good, _ = plausibility([Item(Fraction(n), str(n)) for n in (4, 6)])
    fair, _ = plausibility([Item(Fraction(n), str(n)) for n in (5, 10)])
    poor, _ = plausibility([Item(Fraction(2, 3), "2/3"), Item(Fraction(10), "10")])
    assert good > fair > poor


# -- solve_game24 ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "strategy", ["dfs", "bfs", "beam", "astar", "best_first", "refine", "consensus"]
)
async def test_solve_game24_returns_a_checked_answer(strategy: str) -> None:
    out = await solve_game24("4 5 6 10", strategy=strategy, model=proposer(WINNING))
    assert out["succeeded"] is True and out["termination"] == "success"
    assert check_answer(NUMS, out["answer"]) is None
    assert out["path"][-1].endswith("= 24 (left: 24)")
    assert set(out) >= {"succeeded", "answer", "calls", "tokens", "termination", "path"}
    json.dumps(out)


def test_solve_game24_never_consults_the_exhaustive_solver(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import guardsearch.apps.game24.arith as arith

    def forbidden(numbers: object) -> None:
        raise AssertionError("a search method consulted the solver")

    monkeypatch.setattr(arith, "solvable", forbidden)
    out = solve_game24_sync("4 5 6 10", strategy="dfs", model=proposer(WINNING))
    assert out["succeeded"]


def test_solve_game24_reports_a_failure_within_its_budget() -> None:
    out = solve_game24_sync("1 1 1 1", model=proposer({}), budget=5)
    assert out["succeeded"] is False and out["answer"] is None
    assert out["calls"] <= 5
    assert out["termination"] in ("budget_exhausted", "backtrack_ceiling", "all_pruned")


def test_solve_game24_rejects_bad_numbers() -> None:
    with pytest.raises(ConfigError, match="numbers like"):
        solve_game24_sync("four five", model=proposer({}))
    with pytest.raises(ConfigError, match="2 to 6 numbers"):
        solve_game24_sync("4", model=proposer({}))


async def test_the_llm_value_evaluator_orders_states_when_enabled() -> None:
    def answer(request: ModelRequest) -> str:
        if request.json_schema and "value" in request.json_schema["properties"]:
            content = request.messages[-1].content
            return (
                '{"value": "sure"}' if content.startswith("4 10 30") else '{"value": "impossible"}'
            )
        table = {**WINNING, "4 5 6 10": ["4 + 5", "5 * 6"]}  # the model lists 4 + 5 first
        return json.dumps({"steps": table.get(" ".join(numbers_in(request)), ["4 + 5"])})

    out = await solve_game24("4 5 6 10", strategy="astar", model=ScriptedModel(answer), value=True)
    assert out["succeeded"]
    assert out["path"][0].startswith("5 * 6")  # "sure" beat "impossible"
