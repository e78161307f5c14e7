"""The Game of 24 on the real embedded model (Qwen2.5-Coder-0.5B, CPU): the scaffold
(grammar-constrained proposals, code guards, search) has to carry a weak model."""

from __future__ import annotations

import time

import pytest

from guardsearch.apps.game24 import check_answer, parse_numbers, solve_game24
from guardsearch.core.events import Trace

pytestmark = pytest.mark.model

pytest.importorskip("llama_cpp")

PUZZLE = "4 5 6 10"


async def test_the_default_solver_finds_24_for_4_5_6_10() -> None:
    started = time.perf_counter()
    trace = Trace()
    out = await solve_game24(PUZZLE, model="embedded", trace=trace)
    seconds = time.perf_counter() - started
    assert out["succeeded"] is True, out
    assert out["termination"] == "success"
    assert check_answer(parse_numbers(PUZZLE), out["answer"]) is None
    assert out["calls"] <= 40
    assert len(trace.of_kind("model_call")) == out["calls"]
    print(
        f"\n{PUZZLE}: {out['answer']} in {out['calls']} calls, {out['tokens']} tokens, "
        f"{seconds:.1f} s ({out['strategy']})"
    )


@pytest.mark.parametrize("strategy", ["dfs", "beam"])
async def test_the_other_search_strategies_also_solve_it(strategy: str) -> None:
    out = await solve_game24(PUZZLE, strategy=strategy, model="embedded")
    assert out["succeeded"] is True, out
    assert check_answer(parse_numbers(PUZZLE), out["answer"]) is None


async def test_a_rerun_at_temperature_zero_gives_the_same_answer() -> None:
    first = await solve_game24(PUZZLE, strategy="beam", model="embedded")
    second = await solve_game24(PUZZLE, strategy="beam", model="embedded")
    assert (first["answer"], first["calls"]) == (second["answer"], second["calls"])
