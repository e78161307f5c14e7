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
from guardsearch.guards.constraints import constraint_names
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


def allowed(request: ModelRequest) -> list[str]:
    """The steps a request's grammar allows (its enum)."""
    assert request.json_schema is not None
    return list(request.json_schema["properties"]["steps"]["items"]["enum"])


def test_the_grammar_lists_each_new_state_once() -> None:
    sp = Game24Space(numbers=parse_numbers("2 2 6 6"))
    root = new_state(sp, "astar").tree.root
    request = sp.request_new(root, root.context, seed=0, temperature=0.0, known=set())
    assert request is not None
    steps = allowed(request)
    # 2 + 2 and 2 * 2 both leave 4 6 6: one of them is listed. + and * smaller first;
    # no division by zero; nothing that uses a number the node does not hold.
    assert "2 + 2" in steps and "2 * 2" not in steps and "6 + 2" not in steps
    assert {"2 - 6", "6 - 2", "2 / 6", "6 / 2", "2 + 6", "2 * 6"} <= set(steps)
    proposals = sp.parse(root, json.dumps({"steps": steps}))
    assert len(steps) == len({sp.key(root, p) for p in proposals})
    items = request.json_schema["properties"]["steps"]  # type: ignore[index]
    assert (items["minItems"], items["maxItems"]) == (sp.min_steps, sp.max_steps)
    # Each step at most once per answer, and the grammar is the `available` guard's
    # rule declared as a constraint (an output decoded under it counts as prevented).
    assert items["uniqueItems"] is True
    assert constraint_names(request.json_schema) == ["available"]


def greedy(favourites: list[str], k: int = 4) -> ScriptedModel:
    """A model that follows the grammar: its favourite steps when allowed, then the
    first steps the grammar lists (a greedy model whose favourites run out)."""

    def answer(request: ModelRequest) -> str:
        steps = allowed(request)
        picked = [s for s in favourites if s in steps]
        picked += [s for s in steps if s not in picked]
        return json.dumps({"steps": picked[:k]})

    return ScriptedModel(answer)


async def test_a_re_expansion_cannot_propose_the_steps_already_tried() -> None:
    sp = Game24Space(numbers=NUMS)
    once = await search(sp, "astar", model=greedy(["4 + 5", "10 - 6"], k=2), max_expansions=1)
    root = once.tree.root
    again = sp.request_new(root, root.context, seed=0, temperature=0.0, known=once.state.closed)
    assert again is not None
    steps = allowed(again)
    assert "4 + 5" not in steps and "10 - 6" not in steps
    # 5 + 5 would not even be valid; 6 - 4 leaves 2 5 10, a state no one has tried.
    assert "6 - 4" in steps and len(steps) == len(sp.new_steps(root, set())) - 2


async def test_a_search_with_a_greedy_model_never_hands_the_guards_a_repeat() -> None:
    # 1 1 1 1 cannot make 24: the search tries everything the budget allows.
    sp = Game24Space(numbers=parse_numbers("1 1 1 1"))
    model = greedy(["1 + 1", "1 * 1"])
    result = await search(sp, "astar", model=model, budget=30, rmax=3, reopen=True)
    assert result.termination == "all_pruned" and result.calls < 30
    assert not result.trace.of_kind("candidate_dropped")  # no repeat, no invalid step
    keys = [n.key for n in result.tree if n.parent is not None]
    assert len(keys) == len(set(keys))
    exhausted = [e for e in result.trace.of_kind("expansion") if e.data.get("exhausted")]
    assert exhausted and all(e.data["calls"] == 0 for e in exhausted)


async def test_a_wrong_claimed_result_is_repaired_by_a_json_patch() -> None:
    sp = Game24Space(numbers=NUMS, constrained=False)
    model = ScriptedModel(lambda r: "4 + 6 = 11 (left: 5 6 11)")
    result = await search(sp, "bfs", model=model, max_expansions=1)
    child = next(n for n in result.tree if n.parent)
    assert child.status == "open"
    assert child.value["c"] == "10" and child.value["left"] == ["5", "10", "10"]
    assert child.text == "4 + 6 = 10 (left: 5 10 10)"
    assert result.trace.of_kind("patch_applied")[0].data["passed"] is True


async def test_a_search_builds_on_repaired_steps_instead_of_discarding_them() -> None:
    # Free text: the model gets every step right and every claimed result wrong.
    lines = {
        "4 5 6 10": "5 * 6 = 31 (left: 4 10 31)",
        "4 10 30": "30 - 10 = 21 (left: 4 21)",
        "4 20": "4 + 20 = 25 (left: 25)",
    }
    model = ScriptedModel(lambda r: lines.get(" ".join(numbers_in(r)), "4 + 5 = 9"))
    sp = Game24Space(numbers=NUMS, constrained=False)
    result = await search(sp, "astar", model=model, budget=5)
    assert result.succeeded and result.calls == 3
    assert [n.text for n in result.path[1:]] == [
        "5 * 6 = 30 (left: 4 10 30)",
        "30 - 10 = 20 (left: 4 20)",
        "4 + 20 = 24 (left: 24)",
    ]
    repairs = [e for e in result.trace.of_kind("patch_applied") if e.data["passed"]]
    assert len(repairs) == 3
    assert repairs[0].data["patch"] == [
        {"op": "replace", "path": "/c", "value": "30"},
        {"op": "replace", "path": "/left", "value": ["4", "10", "30"]},
    ]


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


def test_numbers_that_divide_24_score_higher_than_dead_fractions() -> None:
    from guardsearch.apps.game24.score import plausibility

    good, _ = plausibility([Fraction(n) for n in (1, 4, 6)])
    fair, _ = plausibility([Fraction(n) for n in (1, 5, 10)])
    poor, _ = plausibility([Fraction(2, 3), Fraction(1), Fraction(10)])  # nothing cancels 3
    assert good > fair > poor


def test_a_fraction_a_puzzle_needs_is_not_scored_below_dead_siblings() -> None:
    # 3 3 8 8 is solved only by 8 / (3 - 8 / 3): its first step makes 8/3. Every other
    # state one step from 3 3 8 8 cannot reach 24 (the scoring oracle says so here;
    # the score itself never asks it).
    from guardsearch.apps.game24.arith import steps_over
    from guardsearch.apps.game24.score import plausibility

    numbers = parse_numbers("3 3 8 8")
    items = [Item(n, str(n)) for n in numbers]
    needed = plausibility([Fraction(3), Fraction(8, 3), Fraction(8)])[0]
    for a, op, b in steps_over(numbers):
        left = [it.value for it in apply_step(items, a, op, b)]
        if sorted(left) == sorted([Fraction(3), Fraction(8, 3), Fraction(8)]):
            continue
        assert solvable(left) is None
        assert plausibility(left)[0] <= needed, (a, op, b)


async def test_two_numbers_that_cannot_make_24_are_a_dead_end_at_no_call() -> None:
    model = proposer({"4 5 6 10": ["5 * 6"], "4 10 30": ["4 + 10", "30 - 10"]})
    result = await search(space(), "astar", model=model, max_expansions=2)
    dead = next(n for n in result.tree if n.text.startswith("4 + 10"))
    assert dead.pruned and dead.status == "failed"
    assert dead.verdict is not None and dead.verdict.feedback == (
        "4 + 10 = 14: 14 and 30 cannot make 24 (one step makes -16, 7/15, 15/7, 16, 44, 420)"
    )
    alive = next(n for n in result.tree if n.text.startswith("30 - 10"))
    assert alive.status == "open" and alive.h == 0.0
    assert result.calls == 2  # neither two-number state cost a call


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
