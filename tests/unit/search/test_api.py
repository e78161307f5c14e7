"""The public search API: one call shape for every strategy."""

from __future__ import annotations

import json

import pytest
from search_helpers import ByStep, pipeline

from guardsearch import (
    Budget,
    ConfigError,
    Metered,
    ScriptedModel,
    Step,
    max_calls,
)
from guardsearch.search import SearchResult, StepSpace, search, search_sync, strategy_names
from guardsearch.search.state import TERMINATIONS

ALL = ["astar", "beam", "best_first", "bfs", "consensus", "dfs", "refine"]


def test_the_docs_example_defines_a_guarded_search_in_under_twenty_lines() -> None:
    # docs/search.md, verbatim except that the model is scripted.
    model = ScriptedModel(["Autumn rain falls", "Autumn rain\non the roof\nthe kettle sings"])

    def is_haiku(text: str) -> bool | str:
        lines = [line for line in text.splitlines() if line.strip()]
        return len(lines) == 3 or f"a haiku has 3 lines, not {len(lines)}"

    space = StepSpace(
        objective="Write a haiku about autumn rain",
        steps=[Step(name="haiku", prompt="Write the haiku, three lines only.", guard=is_haiku)],
    )
    result = search_sync(
        space,
        strategy="refine",  # or dfs, bfs, beam, astar, best_first, consensus
        model=model,
        budget=Budget.of(5),  # 5 model calls; or calls=, tokens=, seconds=, cost=
    )
    assert result.succeeded and result.termination == "success"
    assert result.answer == "Autumn rain\non the roof\nthe kettle sings"
    assert result.calls == 2
    assert "a haiku has 3 lines, not 1" in model.requests[1].messages[0].content


def test_every_strategy_is_registered_by_name() -> None:
    # `program` serves only spaces that describe a program domain (tests/unit/program).
    assert strategy_names() == sorted([*ALL, "program"])


@pytest.mark.parametrize("strategy", ALL)
async def test_every_strategy_takes_the_same_call_and_returns_a_search_result(
    strategy: str,
) -> None:
    result = await search(
        pipeline(("draft",)), strategy, model=ByStep().model(), budget=Budget(max_calls(10))
    )
    assert isinstance(result, SearchResult)
    assert result.succeeded
    assert result.termination in TERMINATIONS
    assert result.path[0].parent is None and result.path[-1].status == "goal"
    json.dumps(result.as_dict())


def test_an_unknown_strategy_is_a_config_error_naming_the_choices() -> None:
    with pytest.raises(ConfigError, match=r"unknown strategy 'dijkstra'.*astar"):
        search_sync(pipeline(), "dijkstra", model=ScriptedModel(["x"]))


def test_an_unknown_option_is_a_config_error_listing_the_valid_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown option.*beam_width.*valid:.*width"):
        search_sync(pipeline(), "beam", model=ScriptedModel(["x"]), beam_width=3)


def test_bad_option_values_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="width"):
        search_sync(pipeline(), "beam", model=ScriptedModel(["x"]), width=0)
    with pytest.raises(ConfigError, match="samples"):
        search_sync(pipeline(), "dfs", model=ScriptedModel(["x"]), samples=0)
    with pytest.raises(ConfigError, match="reducer"):
        search_sync(pipeline(), "consensus", model=ScriptedModel(["x"]), reducer="loudest")


def test_a_budget_goes_to_metered_or_to_search_not_both() -> None:
    metered = Metered(ScriptedModel(["x"]))
    with pytest.raises(ConfigError, match="not both"):
        search_sync(pipeline(), "dfs", model=metered, budget=Budget(max_calls(3)))


async def test_a_metered_model_brings_its_own_budget_and_trace() -> None:
    metered = Metered(ByStep().model(), Budget(max_calls(2)))
    result = await search(pipeline(), "dfs", model=metered)
    assert result.termination == "budget_exhausted"
    assert result.trace is metered.trace
    assert metered.usage.calls == 2


async def test_search_sync_refuses_to_run_inside_an_event_loop() -> None:
    with pytest.raises(ConfigError, match="running event loop"):
        search_sync(pipeline(), "dfs", model=ScriptedModel(["x"]))


async def test_the_result_context_is_the_winning_paths_context() -> None:
    result = await search(pipeline(), "dfs", model=ByStep().model())
    assert [a[0] for a in result.context.artifacts] == ["analysis", "recon", "strategy", "plan"]
    assert result.context is result.path[-1].context


async def test_the_run_is_bracketed_by_start_and_end_events() -> None:
    result = await search(pipeline(), "dfs", model=ByStep().model())
    kinds = [e.kind for e in result.trace.events]
    assert kinds[0] == "run_start" and kinds[-1] == "run_end"
    assert result.trace.events[-1].data["termination"] == "success"


def test_a_search_result_is_an_outcome_with_seconds_and_a_run_id() -> None:
    from guardsearch.core.outcome import Outcome

    result = search_sync(
        pipeline(("draft",)), "dfs", model=ByStep().model(), budget=10, run_id="s1"
    )
    assert isinstance(result, Outcome)
    assert result.stop_reason == result.termination == "success"
    assert result.run_id == "s1" and result.seconds > 0
    data = result.as_dict()
    assert list(data)[:5] == ["succeeded", "stop_reason", "run_id", "usage", "seconds"]
    assert data["usage"] == result.usage.as_dict()
    assert {"termination", "strategy", "answer", "calls", "tokens", "path"} <= set(data)
    fresh = search_sync(pipeline(("draft",)), "dfs", model=ByStep().model())
    assert fresh.run_id.startswith("run-") and len(fresh.run_id) == 16
