"""`concurrency > 1`: model calls at once, the sequential run's tree, budgets that hold.

The model here answers from the request alone (a seeded RNG per request), yields to
the event loop a random number of times before it answers (so concurrent calls
finish in a scrambled order), counts the calls in flight, and, in the property test,
checks the ledger at every yield.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from search_helpers import CountingSpace, path_of

from guardsearch import (
    Budget,
    Completion,
    ConfigError,
    Context,
    GuardResult,
    Message,
    ModelError,
    ModelRequest,
    Usage,
    max_calls,
    max_cost,
    max_tokens,
)
from guardsearch.core.budget import Limit
from guardsearch.guards.evaluator import resolve_model
from guardsearch.search import Node, Proposal, SearchResult, SearchState, search
from guardsearch.search.expand import EngineOptions

PROPOSE_TOKENS = 64  # CountingSpace's max_tokens
VALUE_TOKENS = 8
STRATEGIES = ["beam", "bfs", "astar", "best_first", "consensus", "dfs", "refine"]


def answer_for(salt: int, request: ModelRequest) -> str:
    """Depends on the request only: children (some repeated across samples, some
    unparseable, now and then the goal 99), padded to a random length."""
    last = request.messages[-1].content
    rng = random.Random(f"{salt}|{last}|{request.seed}")
    pad = " ," * rng.randint(0, 14)  # more words, nothing to parse
    if last.startswith("VALUE:"):
        return f"{rng.randint(0, 9)}{pad}"
    path = path_of(request)
    depth = 0 if path == "start" else len(path.split())
    children = [str(rng.randint(1, 5)) for _ in range(rng.randint(0, 3))]
    if depth >= 1 and rng.random() < 0.3:
        children.append("99")
    if rng.random() < 0.1:
        children.append("x")
    return ", ".join(children) + pad


@dataclass(frozen=True)
class Limits:
    calls: int | None = None
    tokens: int | None = None
    cost64: int | None = None  # in 64ths of a dollar: float sums stay exact

    def build(self) -> Limit | None:
        parts: list[Limit] = []
        if self.calls is not None:
            parts.append(max_calls(self.calls))
        if self.tokens is not None:
            parts.append(max_tokens(self.tokens))
        if self.cost64 is not None:
            parts.append(max_cost(self.cost64 / 64))
        if not parts:
            return None
        limit = parts[0]
        for part in parts[1:]:
            limit = limit | part
        return limit

    def holds(self, usage: Usage) -> bool:
        return (
            (self.calls is None or usage.calls <= self.calls)
            and (self.tokens is None or usage.total_tokens <= self.tokens)
            and (self.cost64 is None or usage.cost <= self.cost64 / 64)
        )


PRICE_UNIT = 1e6 / 64  # per million tokens: one token costs a whole 64th of a dollar


@dataclass
class Interleaving:
    """A priced test model that yields before answering and watches the ledger."""

    salt: int = 0
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    min_yields: int = 0
    max_yields: int = 4
    budget: Budget | None = None
    limits: Limits | None = None
    price_prompt_per_mtok: float = 0.0
    price_completion_per_mtok: float = 0.0
    name: str = "interleaving"
    requests: list[ModelRequest] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    values_in_flight: int = 0
    max_values_in_flight: int = 0
    clamped: bool = False  # a budget granted fewer completion tokens than asked

    def count_tokens(self, request: ModelRequest) -> int:
        return sum(max(1, len(m.content.split())) for m in request.messages)

    async def complete(self, request: ModelRequest) -> Completion:
        self.requests.append(request)
        value = request.messages[-1].content.startswith("VALUE:")
        self.clamped |= request.max_tokens < (VALUE_TOKENS if value else PROPOSE_TOKENS)
        self.in_flight += 1
        self.values_in_flight += value
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self.max_values_in_flight = max(self.max_values_in_flight, self.values_in_flight)
        try:
            for _ in range(self.rng.randint(self.min_yields, self.max_yields) + 1):
                if self.limits is not None and self.budget is not None:
                    assert self.limits.holds(self.budget.used + self.budget.reserved)
                await asyncio.sleep(0)
        finally:
            self.in_flight -= 1
            self.values_in_flight -= value
        words = answer_for(self.salt, request).split()[: request.max_tokens]
        prompt, completion = self.count_tokens(request), max(1, len(words))
        cost = prompt * self.price_prompt_per_mtok + completion * self.price_completion_per_mtok
        return Completion(
            text=" ".join(words),
            usage=Usage(
                calls=1, prompt_tokens=prompt, completion_tokens=completion, cost=cost / 1e6
            ),
        )


@dataclass(kw_only=True)
class ValuedSpace(CountingSpace):
    """CountingSpace whose judge asks the search's model for a score (0-9)."""

    async def evaluate(self, node: Node, proposal: Proposal, context: Context) -> GuardResult:
        metered = resolve_model(None, "the test value judge")
        path = " ".join(str(x) for x in proposal.state)
        request = ModelRequest(
            messages=(Message("system", context.render()), Message("user", f"VALUE:{path}")),
            max_tokens=VALUE_TOKENS,
        )
        completion = await metered.complete(request, step="value", node=node.id)
        digit = completion.text.split()[0] if completion.text.split() else "5"
        return GuardResult.ok("value", score=int(digit) / 10 if digit.isdigit() else 0.5)


OPTIONS: dict[str, dict[str, Any]] = {
    "beam": {"width": 2},
    "bfs": {},
    "astar": {},
    "best_first": {"width": 3},
    "consensus": {"n": 4, "temperature": 0.7},
    "dfs": {},
    "refine": {},
}


async def run(
    strategy: str,
    *,
    concurrency: int,
    samples: int = 3,
    salt: int = 0,
    valued: bool = False,
    depth: int = 3,
    model: Interleaving | None = None,
    budget: Budget | None = None,
    **options: Any,
) -> tuple[SearchResult, Interleaving]:
    model = model if model is not None else Interleaving(salt=salt)
    space = (ValuedSpace if valued else CountingSpace)(goal=99, depth_limit=depth)
    result = await search(
        space,
        strategy,
        model=model,
        budget=budget,
        samples=samples,
        concurrency=concurrency,
        **{**OPTIONS[strategy], **options},
    )
    return result, model


def shape(result: SearchResult) -> dict[str, Any]:
    """Everything a search decided: the tree (ids, statuses, verdicts), the frontier,
    the path and the answer (not the trace: concurrent calls log in another order)."""
    state = result.state
    return {
        "termination": result.termination,
        "succeeded": result.succeeded,
        "answer": result.answer,
        "path": [n.id for n in result.path],
        "nodes": [
            (
                n.id,
                n.parent,
                n.status,
                n.key,
                n.text,
                n.h,
                n.seed,
                n.attempt,
                n.expansions,
                tuple(n.children),
                tuple(n.feedback),
                n.verdict.feedback if n.verdict else None,
            )
            for n in result.tree
        ],
        "closed": dict(state.closed),
        "data": state.data,
        "tables": {name: list(t.items()) for name, t in sorted(state.tables.items())},
        "expansions": result.expansions,
        "goal": state.goal,
        "best": state.best,
    }


def outcome(result: SearchResult) -> dict[str, Any]:
    return {**shape(result), "usage": result.usage}


def assert_consistent(state: SearchState) -> None:
    """Only whole expansions are in the tree: every child's parent was expanded, every
    node is in the closed set, and the expansion counters add up."""
    tree = state.tree
    assert sum(n.expansions for n in tree) == state.expansions
    for node in tree:
        assert state.closed[node.key] == node.id
        if node.parent is not None:
            parent = tree[node.parent]
            assert parent.expansions >= 1 and node.id in parent.children
    assert set(state.closed.values()) == {n.id for n in tree}


# -- (a) the same result as the sequential run ------------------------------------------


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("valued", [False, True], ids=["cheap-judge", "model-judge"])
async def test_concurrency_builds_exactly_the_sequential_run(strategy: str, valued: bool) -> None:
    """samples=3, concurrency 4 vs 1, completions in scrambled order: the same path,
    answer, node ids, statuses, verdicts, frontier and calls, on many scripted trees."""
    reached = set()
    for salt in range(12):
        sequential, one = await run(strategy, concurrency=1, salt=salt, valued=valued)
        concurrent, many = await run(
            strategy, concurrency=4, salt=salt, valued=valued, model=Interleaving(salt=salt)
        )
        assert outcome(concurrent) == outcome(sequential), f"salt {salt}"
        assert concurrent.calls == sequential.calls == len(many.requests) == len(one.requests)
        assert sorted(r.digest() for r in many.requests) == sorted(r.digest() for r in one.requests)
        assert one.max_in_flight == 1
        if len(many.requests) > 1:
            assert many.max_in_flight > 1
        reached.add(sequential.termination)
    assert "success" in reached


async def test_the_engine_options_check_concurrency() -> None:
    assert EngineOptions(concurrency=8).concurrency == 8
    for bad in (0, -1, True, 2.0):
        with pytest.raises(ConfigError, match="concurrency"):
            EngineOptions(concurrency=bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="concurrency"):
        await run("beam", concurrency=0)


# -- (c) calls really overlap, never more than `concurrency` at once ----------------------


@pytest.mark.parametrize("concurrency", [1, 2, 3, 5])
async def test_an_expansions_samples_run_at_once_up_to_the_limit(concurrency: int) -> None:
    model = Interleaving(salt=3, min_yields=2)
    await run("astar", concurrency=concurrency, samples=5, model=model)
    assert model.max_in_flight == concurrency


async def test_the_judging_of_one_expansion_runs_at_once() -> None:
    # One proposer call per expansion: only the judge's calls can overlap.
    overlapped = 0
    for salt in range(10):
        model = Interleaving(salt=salt, min_yields=2)
        await run("beam", concurrency=3, samples=1, valued=True, model=model)
        overlapped = max(overlapped, model.max_values_in_flight)
        assert model.max_in_flight <= 3
    assert overlapped == 3


async def test_consensus_rounds_are_prefetched_and_committed_in_order() -> None:
    # samples=1: overlapping calls can only be several rounds' proposals at once.
    for salt in range(6):
        sequential, _ = await run("consensus", concurrency=1, samples=1, salt=salt, n=6)
        model = Interleaving(salt=salt, min_yields=1)
        concurrent, _ = await run("consensus", concurrency=3, samples=1, model=model, n=6)
        assert outcome(concurrent) == outcome(sequential)
        assert 1 < model.max_in_flight <= 3


async def test_beam_prefetch_builds_the_same_tree_and_may_pay_a_little_more() -> None:
    overlapped = False
    for salt in range(12):
        sequential, _ = await run("bfs", concurrency=1, samples=1, salt=salt)
        model = Interleaving(salt=salt, min_yields=1)
        concurrent, _ = await run("bfs", concurrency=4, samples=1, model=model, prefetch=True)
        assert shape(concurrent) == shape(sequential)
        assert concurrent.calls >= sequential.calls
        if concurrent.termination != "success":
            assert concurrent.usage == sequential.usage  # nothing was cut short
        overlapped |= model.max_in_flight > 1
        assert model.max_in_flight <= 4
    assert overlapped


# -- budgets and failures inside a concurrent batch -------------------------------------


async def test_a_call_refused_inside_a_batch_commits_nothing_and_resumes_exactly() -> None:
    """A token limit that lets some of an expansion's concurrent calls through and
    refuses another: the expansion is not committed, no limit is passed, and the
    state resumes (with more budget) to the unbroken run's tree."""
    refused_mid_batch = 0
    for salt in range(3):
        unbroken, _ = await run("beam", concurrency=4, salt=salt)
        for tokens in range(60, 1500, 37):
            budget = Budget(max_tokens(tokens))
            result, _ = await run("beam", concurrency=4, salt=salt, budget=budget)
            assert budget.used.total_tokens <= tokens
            assert budget.reserved == Usage() and budget.open_reservations == 0
            assert_consistent(result.state)
            if result.termination != "budget_exhausted":
                continue
            refusals = result.trace.of_kind("budget_exceeded")
            refused_mid_batch += any(e.node for e in refusals)  # Metered's, not the engine's
            saved = SearchState.from_dict(result.state.to_dict())
            resumed = await search(
                CountingSpace(goal=99, depth_limit=3),
                "beam",
                model=Interleaving(salt=salt),
                resume=saved,
                samples=3,
                concurrency=4,
                **OPTIONS["beam"],
            )
            assert shape(resumed) == shape(unbroken)
    assert refused_mid_batch > 0


async def test_a_failing_call_in_a_batch_leaves_nothing_running_or_reserved() -> None:
    class Flaky(Interleaving):
        async def complete(self, request: ModelRequest) -> Completion:
            if request.seed == 2:
                await asyncio.sleep(0)
                raise ModelError("connection reset")
            return await super().complete(request)

    budget = Budget()
    model = Flaky(salt=5, min_yields=3)
    space = CountingSpace(goal=99, depth_limit=3)
    with pytest.raises(ModelError, match="connection reset"):
        await search(space, "consensus", model=model, budget=budget, samples=3, concurrency=4)
    assert budget.reserved == Usage() and budget.open_reservations == 0
    assert model.in_flight == 0
    assert asyncio.all_tasks() == {asyncio.current_task()}


async def test_a_cancelled_concurrent_search_saves_its_state_and_leaks_nothing() -> None:
    started = asyncio.Event()

    class Stuck(Interleaving):
        async def complete(self, request: ModelRequest) -> Completion:
            self.in_flight += 1
            if self.in_flight == 3:
                started.set()
            try:
                await asyncio.Event().wait()  # never answers
            finally:
                self.in_flight -= 1
            raise AssertionError("unreachable")

    saved: list[str | None] = []
    budget = Budget()
    model = Stuck()
    task = asyncio.ensure_future(
        search(
            CountingSpace(goal=99, depth_limit=3),
            "consensus",
            model=model,
            budget=budget,
            samples=1,
            concurrency=3,
            on_expansion=lambda state: saved.append(state.termination),
        )
    )
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert saved[-1] == "cancelled"
    assert model.in_flight == 0
    assert budget.reserved == Usage() and budget.open_reservations == 0
    assert budget.used.calls == 3  # cancelled in flight: each counts as a call
    assert asyncio.all_tasks() == {asyncio.current_task()}


# -- (b) the property: limits hold, and without a budget hit the result is the same ------


limits_strategy = st.builds(
    Limits,
    calls=st.none() | st.integers(0, 30),
    tokens=st.none() | st.integers(0, 2500),
    cost64=st.none() | st.integers(0, 3000),
)


async def _limited(
    strategy: str,
    limits: Limits,
    *,
    concurrency: int,
    samples: int,
    salt: int,
    valued: bool,
    depth: int,
    prices: tuple[int, int],
    yields: int,
    options: dict[str, Any],
) -> tuple[SearchResult, Interleaving, Budget]:
    budget = Budget(limits.build())
    model = Interleaving(
        salt=salt,
        rng=random.Random(yields),
        budget=budget,
        limits=limits,
        price_prompt_per_mtok=prices[0] * PRICE_UNIT,
        price_completion_per_mtok=prices[1] * PRICE_UNIT,
    )
    result, _ = await run(
        strategy,
        concurrency=concurrency,
        samples=samples,
        valued=valued,
        depth=depth,
        model=model,
        budget=budget,
        **options,
    )
    return result, model, budget


@settings(
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    strategy=st.sampled_from(STRATEGIES),
    limits=limits_strategy,
    samples=st.integers(1, 3),
    concurrency=st.integers(2, 6),
    salt=st.integers(0, 10**6),
    valued=st.booleans(),
    depth=st.integers(1, 3),
    prices=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    yields=st.integers(0, 10**6),
    prefetch=st.booleans(),
)
def test_concurrent_searches_never_overrun_a_limit_and_match_the_sequential_run(
    strategy: str,
    limits: Limits,
    samples: int,
    concurrency: int,
    salt: int,
    valued: bool,
    depth: int,
    prices: tuple[int, int],
    yields: int,
    prefetch: bool,
) -> None:
    """Random call/token/cost limits, samples, concurrency, answer lengths and yields:
    used + reserved is within every limit at every point a call yields, the final
    usage too, every reservation is closed, only whole expansions are in the tree;
    and when neither run was touched by the budget (nothing refused, nothing clamped),
    the concurrent run is the sequential run."""
    options = {"prefetch": True} if prefetch and strategy in ("beam", "bfs") else {}
    common: dict[str, Any] = {
        "samples": samples,
        "salt": salt,
        "valued": valued,
        "depth": depth,
        "prices": prices,
        "yields": yields,
        "options": options,
    }
    sequential, seq_model, seq_budget = asyncio.run(
        _limited(strategy, limits, concurrency=1, **common)
    )
    concurrent, model, budget = asyncio.run(
        _limited(strategy, limits, concurrency=concurrency, **common)
    )
    for result, used, ledger in ((sequential, seq_model, seq_budget), (concurrent, model, budget)):
        assert limits.holds(ledger.used)
        assert ledger.reserved == Usage() and ledger.open_reservations == 0
        assert ledger.overrun == Usage()
        assert result.usage == ledger.used
        assert used.in_flight == 0
        assert_consistent(result.state)
    assert model.max_in_flight <= concurrency
    untouched = all(
        r.termination != "budget_exhausted" and not m.clamped
        for r, m in ((sequential, seq_model), (concurrent, model))
    )
    if limits == Limits():
        assert untouched
    if untouched:
        assert shape(concurrent) == shape(sequential)
        if options:
            assert concurrent.calls >= sequential.calls
        else:
            assert concurrent.usage == sequential.usage
