"""bfs / beam / astar / best_first / refine: ordering, widths, retries, terminations."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from search_helpers import ByStep, CountingSpace, path_of, pipeline, step_of

from guardsearch import Budget, Check, GuardResult, ModelRequest, ScriptedModel, Step, max_calls
from guardsearch.search import StepSpace, search, search_sync

TREE = {"start": "1, 2, 3", "1": "11, 12", "2": "21, 22", "3": "31, 32"}


def tree_model(answers: dict[str, str] = TREE) -> ScriptedModel:
    return ScriptedModel(lambda r: answers.get(path_of(r), "0"))


async def test_bfs_expands_level_by_level_and_keeps_every_viable_child() -> None:
    model = tree_model({**TREE, "1 11": "0", "1 12": "0", "2 21": "0", "2 22": "99"})
    result = await search(CountingSpace(goal=99, depth_limit=3), "bfs", model=model)
    assert result.succeeded
    order = [path_of(r) for r in model.requests]
    assert order[:4] == ["start", "1", "2", "3"]
    assert order[4:] == ["1 11", "1 12", "2 21", "2 22"]


async def test_beam_keeps_only_the_best_width_children_per_level() -> None:
    scores = {1: 0.2, 2: 0.9, 3: 0.5, 21: 0.1, 22: 0.8, 31: 0.7, 32: 0.3}
    model = tree_model({**TREE, "2 22": "99"})
    space = CountingSpace(goal=99, depth_limit=3, scores=scores)
    result = await search(space, "beam", model=model, width=2)
    assert result.succeeded and result.answer == [2, 22, 99]
    order = [path_of(r) for r in model.requests]
    assert order == ["start", "2", "3", "2 22"]
    assert next(n for n in result.tree if n.value == 1).status == "pruned"


async def test_astar_always_expands_the_lowest_f_first() -> None:
    scores = {1: 0.3, 2: 0.9, 3: 0.6, 21: 0.2, 22: 0.1, 31: 0.95, 32: 0.4}
    model = tree_model({**TREE, "3 31": "99"})
    space = CountingSpace(goal=99, depth_limit=3, scores=scores)
    result = await search(space, "astar", model=model, g_weight=0.1)
    assert result.succeeded
    # f(2)=0.2 < f(3)=0.5; then f(31)=0.25 beats f(21)=1.0, f(22)=1.1 and f(1)=0.8.
    assert [path_of(r) for r in model.requests] == ["start", "2", "3", "3 31"]


async def test_astar_path_cost_can_outweigh_a_better_score() -> None:
    scores = {1: 0.5, 2: 0.6, 21: 0.7, 11: 0.5}
    answers = {"start": "1, 2", "1": "11", "2": "21", "1 11": "99", "2 21": "99"}
    greedy = tree_model(answers)
    space = CountingSpace(goal=99, depth_limit=3, scores=scores)
    await search(space, "best_first", model=greedy)
    costly = tree_model(answers)
    space = CountingSpace(goal=99, depth_limit=3, scores=scores)
    await search(space, "astar", model=costly, g_weight=1.0)
    # best_first: h(21)=0.3 < h(1)=0.5; astar: f(1)=1.5 < f(21)=2.3.
    assert [path_of(r) for r in greedy.requests][:3] == ["start", "2", "2 21"]
    assert [path_of(r) for r in costly.requests][:3] == ["start", "2", "1"]


async def test_astar_beam_width_bounds_the_open_set() -> None:
    model = tree_model()
    space = CountingSpace(goal=99, depth_limit=3, scores={1: 0.9, 2: 0.5, 3: 0.1})
    result = await search(space, "astar", model=model, width=1, budget=Budget(max_calls(3)))
    assert {n.value for n in result.tree if n.status == "pruned"} >= {2, 3}


async def test_a_node_that_yields_nothing_viable_is_reexpanded_with_feedback() -> None:
    answers = iter(["nope", "5"])
    model = ScriptedModel(lambda r: next(answers))
    result = await search(CountingSpace(goal=5, depth_limit=1), "astar", model=model, rmax=2)
    assert result.succeeded
    assert "not parseable: 'nope'" in model.requests[1].messages[0].content


async def test_refine_retries_with_feedback_and_never_backtracks() -> None:
    script = ByStep({"second": ["BAD too short", "BAD still too short"]})
    result = await search(pipeline(("first", "second")), "refine", model=script.model())
    assert result.succeeded
    assert script.calls == ["first", "second", "second", "second"]


async def test_refine_keeps_the_best_candidate_when_no_target_is_reached() -> None:
    scores = iter([0.4, 0.8, 0.6])

    def graded(value: str) -> GuardResult:
        return GuardResult(
            passed=True,
            score=next(scores),
            checks=(Check(name="concise", passed=False),),
        )

    space = StepSpace(objective="Summarise", steps=[Step(name="s", prompt="go", guard=graded)])
    model = ScriptedModel(["v1", "v2", "v3"])
    result = await search(space, "refine", model=model, rmax=3, target_score=0.9)
    assert result.succeeded and result.answer == "v2"
    assert "score 0.40 is below the target 0.90; failed checks: concise" in (
        model.requests[1].messages[0].content
    )


async def test_refine_stops_as_soon_as_the_target_is_reached() -> None:
    space = StepSpace(
        objective="x",
        steps=[Step(name="s", prompt="go", guard=lambda v: GuardResult.ok(score=0.95))],
    )
    model = ScriptedModel(["a", "b"])
    result = await search(space, "refine", model=model, target_score=0.9)
    assert result.succeeded and model.calls == 1


@pytest.mark.parametrize("strategy", ["bfs", "beam", "astar", "best_first", "refine"])
async def test_all_pruned_when_nothing_viable_remains(strategy: str) -> None:
    model = ScriptedModel(["BAD no good"], repeat_last=True)
    result = await search(pipeline(("only",)), strategy, model=model)
    assert result.termination == "all_pruned"
    assert not result.succeeded and result.answer is None
    assert result.path[-1].status == "failed"


@pytest.mark.parametrize(
    "strategy", ["dfs", "bfs", "beam", "astar", "best_first", "refine", "consensus"]
)
async def test_budget_exhausted_for_every_strategy(strategy: str) -> None:
    model = ScriptedModel(["BAD not parseable"], repeat_last=True)
    space = pipeline(("a", "b"))
    result = await search(space, strategy, model=model, budget=Budget(max_calls(0)))
    assert result.termination == "budget_exhausted" and result.calls == 0


@pytest.mark.parametrize(
    "strategy", ["dfs", "bfs", "beam", "astar", "best_first", "refine", "consensus"]
)
async def test_cancelled_for_every_strategy(strategy: str) -> None:
    result = await search(pipeline(), strategy, model=ByStep().model(), should_stop=lambda: True)
    assert result.termination == "cancelled" and result.calls == 0


@pytest.mark.parametrize(
    "strategy", ["dfs", "bfs", "beam", "astar", "best_first", "refine", "consensus"]
)
async def test_success_for_every_strategy(strategy: str) -> None:
    result = await search(pipeline(), strategy, model=ByStep().model())
    assert result.termination == "success"
    assert [n.step for n in result.path[1:]] == ["analysis", "recon", "strategy", "plan"]


async def test_a_task_cancellation_saves_the_state_and_propagates() -> None:
    import asyncio

    saved: list[str | None] = []

    async def slow(request: ModelRequest) -> str:
        await asyncio.sleep(10)
        return "x"

    task = asyncio.create_task(
        search(
            pipeline(),
            "dfs",
            model=ScriptedModel(slow),
            on_expansion=lambda s: saved.append(s.termination),
        )
    )
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert saved[-1] == "cancelled"


async def test_an_astar_retry_waits_behind_better_open_nodes() -> None:
    answers = {"start": "1, 2", "1": "nope", "2": "nope", "2 x": "99"}
    scores = {1: 0.9, 2: 0.5}
    patient = tree_model(answers)
    space = CountingSpace(goal=99, depth_limit=3, scores=scores)
    await search(space, "astar", model=patient, budget=Budget(max_calls(4)))
    eager = tree_model(answers)
    space = CountingSpace(goal=99, depth_limit=3, scores=scores)
    await search(space, "astar", model=eager, retry_penalty=0.0, budget=Budget(max_calls(4)))
    # f(1) = 0.2 but after a failed expansion 0.7 > f(2) = 0.6: node 2 goes first.
    assert [path_of(r) for r in patient.requests][:3] == ["start", "1", "2"]
    assert [path_of(r) for r in eager.requests][:3] == ["start", "1", "1"]


def sampled_tree(answers: dict[tuple[str, float], str]) -> ScriptedModel:
    """Answers per (path, temperature); a pair not listed answers "nope" (nothing viable)."""
    return ScriptedModel(lambda r: answers.get((path_of(r), r.temperature), "nope"))


async def test_astar_ends_all_pruned_when_the_open_set_runs_dry_unless_reopened() -> None:
    # At temperature 0 the proposer only ever offers 1 and 2, which lead nowhere (each is
    # retried once, rmax 2); sampled at 0.7 a re-expansion of the root finds 3 -> 99.
    answers = {("start", 0.0): "1, 2", ("start", 0.7): "3", ("3", 0.0): "99"}
    space = CountingSpace(goal=99, depth_limit=3)
    dry = await search(space, "astar", model=sampled_tree(answers), rmax=2)
    assert dry.termination == "all_pruned" and dry.calls == 5
    model = sampled_tree(answers)
    space = CountingSpace(goal=99, depth_limit=3)
    found = await search(
        space, "astar", model=model, rmax=2, reopen=True, reexpand_temperature=0.7
    )
    assert found.succeeded and found.answer == [3, 99]
    requests = [(path_of(r), r.temperature, r.seed) for r in model.requests]
    # Retries of 1 and 2 sample too; then the dry open set re-opens the root (1 and 2
    # have used their rmax), whose second expansion samples at 0.7 with a fresh seed.
    assert requests == [
        ("start", 0.0, 0),
        ("1", 0.0, 0),
        ("2", 0.0, 0),
        ("1", 0.7, 1),
        ("2", 0.7, 1),
        ("start", 0.7, 1),
        ("3", 0.0, 0),
    ]
    reopened = [e for e in found.trace.of_kind("note") if e.data.get("what") == "reopen"]
    assert [e.data["nodes"] for e in reopened] == [["n0"]]


async def test_astar_reopen_stops_at_rmax_with_all_pruned() -> None:
    space = CountingSpace(goal=99, depth_limit=2)
    model = sampled_tree({("start", 0.0): "1", ("start", 0.5): "2"})
    result = await search(
        space, "astar", model=model, rmax=3, reopen=True, reexpand_temperature=0.5
    )
    # Every node is expanded at most rmax = 3 times, then the search ends all_pruned.
    assert result.termination == "all_pruned"
    assert all(n.expansions <= 3 for n in result.tree)
    root_calls = [r for r in model.requests if path_of(r) == "start"]
    assert [r.temperature for r in root_calls] == [0.0, 0.5, 0.5]
    assert len({r.seed for r in root_calls}) == 3


def test_astar_rejects_a_negative_reexpand_temperature() -> None:
    from guardsearch.core.errors import ConfigError
    from guardsearch.search.strategies.astar import AStarOptions

    with pytest.raises(ConfigError, match="reexpand_temperature"):
        AStarOptions(reexpand_temperature=-0.1)


STRATEGY_NAMES = ["dfs", "bfs", "beam", "astar", "best_first", "refine", "consensus"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    strategy=st.sampled_from(STRATEGY_NAMES),
    limit=st.integers(0, 12),
    verdicts=st.lists(
        st.sampled_from(["ok", "BAD no", "BAD not parseable", "FATAL x"]), max_size=40
    ),
    samples=st.integers(1, 3),
)
def test_no_strategy_ever_exceeds_max_calls(
    strategy: str, limit: int, verdicts: list[str], samples: int
) -> None:
    feed = iter(verdicts)
    counter = iter(range(10_000))

    def answer(request: ModelRequest) -> str:
        verdict = next(feed, "ok")
        unique = f"{step_of(request)} {next(counter)}"
        return unique if verdict == "ok" else f"{verdict} {unique}"

    budget = Budget(max_calls(limit))
    result = search_sync(
        pipeline(("a", "b", "c")),
        strategy,
        model=ScriptedModel(answer),
        budget=budget,
        samples=samples,
    )
    assert result.calls <= limit
    assert budget.used.calls <= limit and budget.open_reservations == 0
