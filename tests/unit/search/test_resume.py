"""Frontier and tree are plain data: every strategy resumes from any saved checkpoint."""

from __future__ import annotations

import json
from typing import Any

import pytest
from search_helpers import CountingSpace, path_of, pipeline, step_of

from guardsearch import Budget, ModelRequest, ScriptedModel, max_calls
from guardsearch.search import SearchState, StepSpace, search

TREE = {
    "start": "1, 2, 3, x",
    "1": "11, 12",
    "2": "21",
    "3": "31, 32",
    "1 11": "0",
    "1 12": "0",
    "2 21": "0",
    "3 31": "99",
}


def tree_answer(request: ModelRequest) -> str:
    return TREE.get(path_of(request), "0")


def pipeline_answer(request: ModelRequest) -> str:
    step = step_of(request)
    prompt = request.messages[0].content
    if step == "plan" and "## Previous Attempt Failed" not in prompt and "rejected" not in prompt:
        return "BAD preconditions {a} not satisfiable"
    if step == "recon" and "rejected" not in prompt:
        return "BAD not parseable as JSON"
    return f"{step} ({len(prompt)})"


def consensus_answer(request: ModelRequest) -> str:
    return ["Paris", "Lyon", "Paris", "Paris"][request.seed or 0]


def space_for(strategy: str) -> tuple[Any, Any, dict[str, Any]]:
    if strategy == "dfs":
        return pipeline(), pipeline_answer, {}
    if strategy == "refine":
        return pipeline(), pipeline_answer, {"rmax": 3}
    if strategy == "consensus":
        space = StepSpace(objective="Capital of France?", steps=pipeline(("answer",)).steps)
        return space, consensus_answer, {"n": 4}
    scores = {1: 0.6, 2: 0.4, 3: 0.5, 31: 0.9}
    options = {"width": 2} if strategy in ("beam", "astar", "best_first") else {}
    return CountingSpace(goal=99, depth_limit=3, scores=scores), tree_answer, options


fresh = space_for


STRATEGIES = ["dfs", "bfs", "beam", "astar", "best_first", "refine", "consensus"]


def outcome(result: Any) -> tuple[Any, ...]:
    return (
        result.termination,
        [n.text for n in result.path],
        result.calls,
        result.expansions,
        len(result.tree),
    )


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_resuming_from_any_checkpoint_finishes_exactly_like_an_unbroken_run(
    strategy: str,
) -> None:
    space, answer, options = fresh(strategy)
    saved: list[str] = []
    whole = await search(
        space,
        strategy,
        model=ScriptedModel(answer),
        on_expansion=lambda s: saved.append(json.dumps(s.to_dict())),
        **options,
    )
    assert whole.succeeded
    assert len(saved) >= 3
    for snapshot in saved[:-1]:
        space, answer, options = fresh(strategy)
        resumed = await search(
            space,
            strategy,
            model=ScriptedModel(answer),
            resume=json.loads(snapshot),
            **options,
        )
        assert outcome(resumed) == outcome(whole)


async def test_a_state_round_trips_through_json() -> None:
    space, answer, options = fresh("dfs")
    result = await search(space, "dfs", model=ScriptedModel(answer), **options)
    data = json.loads(json.dumps(result.state.to_dict()))
    again = SearchState.from_dict(data)
    assert again.to_dict() == data
    assert [n.id for n in again.tree] == [n.id for n in result.tree]
    assert again.tree.root.context == result.tree.root.context


async def test_changed_nodes_let_a_store_save_incrementally() -> None:
    space, answer, options = fresh("astar")
    seen: set[str] = set()
    sizes: list[int] = []

    def save(state: SearchState) -> None:
        seen.update(state.changed)
        sizes.append(len(state.changed))

    result = await search(space, "astar", model=ScriptedModel(answer), on_expansion=save, **options)
    assert seen == {n.id for n in result.tree}
    assert max(sizes) < len(result.tree)  # each save carries only what changed


async def test_a_budget_exhausted_search_resumes_with_more_budget() -> None:
    space, answer, options = fresh("dfs")
    first = await search(
        space, "dfs", model=ScriptedModel(answer), budget=Budget(max_calls(3)), **options
    )
    assert first.termination == "budget_exhausted" and first.calls == 3
    space, answer, options = fresh("dfs")
    second = await search(
        space,
        "dfs",
        model=ScriptedModel(answer),
        budget=Budget(max_calls(30)),
        resume=first.state.to_dict(),
        **options,
    )
    whole = await search(*fresh("dfs")[:1], "dfs", model=ScriptedModel(answer))
    assert second.succeeded
    assert second.calls == whole.calls  # the resumed run's budget counts the first part


async def test_resuming_with_another_strategy_is_refused() -> None:
    from guardsearch import ConfigError

    space, answer, _ = fresh("dfs")
    result = await search(space, "dfs", model=ScriptedModel(answer))
    with pytest.raises(ConfigError, match="cannot resume a 'dfs' search"):
        await search(space, "bfs", model=ScriptedModel(answer), resume=result.state)
