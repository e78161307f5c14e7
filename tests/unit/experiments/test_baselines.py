"""Tree of Thoughts' baselines for the Game of 24 on scripted models."""

from __future__ import annotations

import json

import pytest
from helpers import arithmetic_model

from guardsearch.apps.game24 import arith, baselines
from guardsearch.core.budget import Budget, max_calls
from guardsearch.models.metered import Metered
from guardsearch.models.scripted import ScriptedModel


@pytest.mark.parametrize(
    ("text", "expr"),
    [
        ("Answer: (4 + 8) * (6 - 4) = 24", "(4 + 8) * (6 - 4)"),
        ("Steps:\n4 + 8 = 12 (left: 4 6 12)\nanswer: 2 * 12 = 24\n", "2 * 12"),
        ("Answer: `(10 - 4) * 4`", "(10 - 4) * 4"),
        ("no idea\n(1 + 5) * 4 = 24", "(1 + 5) * 4"),
        ("I cannot do this.", None),
    ],
)
def test_the_answer_line_is_extracted(text: str, expr: str | None) -> None:
    assert baselines.extract_answer(text) == expr


async def test_io_is_one_greedy_call_checked_exactly() -> None:
    model = ScriptedModel(["Answer: (10 - 6) * (5 + 1) = 24"])
    metered = Metered(model)
    right = await baselines.io("1 5 6 10", metered)
    assert right["succeeded"] is True
    assert right["termination"] == "success"
    assert metered.usage.calls == 1
    request = model.requests[0]
    assert request.temperature == 0.0
    assert "Input: 4 4 6 8" in request.messages[0].content  # ToT's five examples
    assert request.messages[0].content.startswith("Primary objective:")
    wrong = await baselines.io("1 5 6 10", Metered(ScriptedModel(["Answer: 10 + 6 = 24"])))
    assert (wrong["succeeded"], wrong["termination"]) == (False, "wrong_answer")
    assert wrong["proposed"] == "10 + 6"


async def test_cot_uses_tot_examples_or_the_given_ones() -> None:
    model = ScriptedModel(["Steps:\n...\nAnswer: 4 * 6 * 1 * 1 = 24"] * 2)
    assert (await baselines.cot("1 1 4 6", Metered(model)))["succeeded"]
    assert "13 - 10 = 3 (left: 3 4 9)" in model.requests[0].messages[0].content
    mine = baselines.Example("2 2 3 4", ("2 * 3 = 6 (left: 2 4 6)",), "(2 * 3) * (4 - 2)")
    await baselines.cot("1 1 4 6", Metered(model), examples=[mine])
    system = model.requests[1].messages[0].content
    assert "Input: 2 2 3 4" in system
    assert "13 - 10" not in system


async def test_cot_sc_votes_over_k_seeded_samples() -> None:
    answers = [
        "Answer: 1 + 1 + 4 + 6 = 24",  # wrong, once
        "Answer: (1 + 1) * (6 + 4) = 24",  # wrong, once
        "Answer: 4 * 6 * 1 * 1 = 24",
        "Answer: 4*6*1*1 = 24",  # the same answer, other spacing
        "no answer",
    ]
    model = ScriptedModel(answers)
    out = await baselines.cot_sc("1 1 4 6", Metered(model), k=5)
    assert out["succeeded"] is True
    assert [r.seed for r in model.requests] == [0, 1, 2, 3, 4]
    assert all(r.temperature == 0.7 for r in model.requests)
    assert out["votes"]["4*6*1*1"] == 2


def test_majority_ties_go_to_the_first_answer() -> None:
    assert baselines.majority(["a + b", "c", "a+b", "c"]) == "a + b"
    assert baselines.majority([]) is None


async def test_cot_sc_stops_at_the_budget() -> None:
    model = ScriptedModel(["Answer: 1 + 1 = 24"], repeat_last=True)
    out = await baselines.cot_sc("1 1 4 6", Metered(model, Budget(max_calls(3))), k=5)
    assert model.calls == 3
    assert out["termination"] == "budget_exhausted"


async def test_tot_bfs_values_each_new_state_three_times_and_keeps_five() -> None:
    model = arithmetic_model()
    metered = Metered(model)
    out = await baselines.tot_bfs("1 1 4 6", metered)
    assert out["succeeded"] is True
    values = [r for r in model.requests if r.json_schema and "value" in r.json_schema["properties"]]
    proposals = [r for r in model.requests if r not in values]
    assert values and len(values) % 3 == 0
    assert {r.seed for r in values} == {0, 1, 2}
    assert all(r.temperature == 0.7 for r in values)
    # Level 2 expands at most width = 5 states kept from level 1.
    assert len(proposals) <= 1 + 5 + 5
    assert all(n["checks"] for n in out["nodes"] if n["depth"] < 3 and n["status"] != "failed")


async def test_tot_value_maps_sure_likely_impossible_like_tot() -> None:
    words = iter(["sure", "likely", "impossible"])

    def answer(request):  # type: ignore[no-untyped-def]
        if request.json_schema and "value" in request.json_schema["properties"]:
            return json.dumps({"value": next(words, "likely")})
        return '{"steps": ["4 * 6"]}'

    out = await baselines.tot_bfs("1 1 4 6", Metered(ScriptedModel(answer)))
    (node,) = [n for n in out["nodes"] if n["depth"] == 1]
    assert node["score"] == pytest.approx((20 + 1 + 0.001) / 60)


async def test_no_method_consults_the_exhaustive_solver(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object) -> None:
        raise AssertionError("a method consulted the scoring oracle")

    monkeypatch.setattr(arith, "solvable", forbidden)
    model = arithmetic_model()
    await baselines.io("1 1 4 6", Metered(model))
    await baselines.cot("1 1 4 6", Metered(model))
    await baselines.cot_sc("1 1 4 6", Metered(model), k=2)
    await baselines.tot_bfs("1 1 4 6", Metered(model))
    for strategy in ("astar", "dfs", "beam"):
        assert (await baselines.search_method("1 1 4 6", strategy, Metered(model)))["succeeded"]


async def test_search_records_the_tree_and_the_winning_path() -> None:
    out = await baselines.search_method("1 1 4 6", "astar", Metered(arithmetic_model()))
    winning = [n for n in out["nodes"] if n["winning"]]
    assert [n["text"] for n in winning] == out["path"]
    assert winning[-1]["status"] == "goal"
    assert arith.check_answer(arith.parse_numbers("1 1 4 6"), out["answer"]) is None
    assert out["numbers"] == "1 1 4 6"


async def test_backtracks_are_read_from_the_trace() -> None:
    dfs = await baselines.search_method("4 5 6 10", "dfs", Metered(arithmetic_model()))
    astar = await baselines.search_method(
        "4 5 6 10", "astar", Metered(arithmetic_model(), Budget(max_calls(20)))
    )
    beam = await baselines.search_method("4 5 6 10", "beam", Metered(arithmetic_model()))
    assert dfs["backtracks"] and set(dfs["backtracks"]) <= {1, 2}
    assert astar["backtracks"] and all(1 <= d <= 2 for d in astar["backtracks"])
    assert beam["backtracks"] == []
