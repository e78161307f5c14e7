"""Tiers, environment configuration and the state's invariants."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from research_helpers import PLAN, QUESTION, research_model

from guardsearch.core.budget import Allowance
from guardsearch.core.errors import ConfigError, RunError
from guardsearch.core.source import Source
from guardsearch.corpus import CorpusIndex
from guardsearch.loops.research import AgentResponse, ResearchConfig, ResearchLoop
from guardsearch.loops.research.config import default_budget
from guardsearch.loops.research.state import Query, ResearchState, check_transition
from guardsearch.tools import CorpusProvider, QueryOutcome


def test_tiers_follow_the_seed_numbers() -> None:
    config = ResearchConfig()
    assert (
        config.limits("simple").max_iters,
        config.limits("simple").max_queries,
        config.limits("simple").max_sources,
    ) == (2, 3, 5)
    assert (config.limits("standard").max_iters, config.limits("standard").max_sources) == (5, 15)
    assert (config.limits("deep").max_iters, config.limits("deep").max_queries) == (10, 15)


def test_the_default_is_standard_when_nothing_is_detected() -> None:
    assert ResearchConfig().limits(None).name == "standard"


def test_an_explicit_tier_overrides_the_detected_one() -> None:
    assert ResearchConfig(tier="deep").limits("simple").name == "deep"


def test_environment_variables_override_tier_defaults() -> None:
    env = {
        "RESEARCH_MAX_ITERS": "3",
        "RESEARCH_MAX_QUERIES": "4",
        "RESEARCH_MAX_SOURCES": "6",
        "RESEARCH_MAX_EXECUTION_TIME_S": "75",
        "RESEARCH_TOKEN_BUDGET": "9000",
    }
    config = ResearchConfig.from_env(env)
    limits = config.limits("deep")
    assert (limits.max_iters, limits.max_queries, limits.max_sources) == (3, 4, 6)
    assert default_budget(env).allowance == Allowance(tokens=9000, seconds=75.0)


def test_the_default_budget_is_40000_tokens_and_120_seconds() -> None:
    assert default_budget({}).allowance == Allowance(tokens=40_000, seconds=120.0)
    with pytest.raises(ConfigError, match="RESEARCH_TOKEN_BUDGET"):
        default_budget({"RESEARCH_TOKEN_BUDGET": "lots"})


def test_request_options_override_the_environment() -> None:
    config = ResearchConfig.from_env({"RESEARCH_MAX_ITERS": "3"}).with_options(
        max_iters=1, max_sources=None
    )
    assert config.max_iters == 1 and config.max_sources is None


def test_bad_configuration_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="RESEARCH_MAX_ITERS"):
        ResearchConfig.from_env({"RESEARCH_MAX_ITERS": "many"})
    with pytest.raises(ConfigError, match="unknown tier"):
        ResearchConfig(tier="huge")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="unknown research option"):
        ResearchConfig().with_options(colour="red")


async def test_the_planner_detects_the_tier_unless_overridden(small_index: CorpusIndex) -> None:
    providers = [CorpusProvider(small_index)]
    deep = research_model(plan={**PLAN, "complexity": "deep"})
    run = await ResearchLoop(model=deep, providers=providers, config=ResearchConfig()).run(QUESTION)
    assert isinstance(run.response, AgentResponse) and run.response.tier == "deep"
    assert run.state.max_iters == 10
    run = await ResearchLoop(
        model=research_model(plan={**PLAN, "complexity": "deep"}),
        providers=providers,
        config=ResearchConfig(),
    ).run(QUESTION, tier="simple")
    assert run.state.tier == "simple" and run.state.max_queries == 3
    assert len(run.state.queries_run) == 3  # the task + the first two planned queries


def _state() -> ResearchState:
    return ResearchState(task="t", max_iters=3, max_sources=4)


def _outcome(query: str, titles: list[str]) -> QueryOutcome:
    return QueryOutcome(
        query=query,
        provider="p",
        hits=tuple(
            Source(title=t, location=f"loc:{t}", text=f"{t} text", provider="p") for t in titles
        ),
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=5), max_size=3), max_size=4)
)
def test_results_are_append_only_with_stable_ids(batches: list[list[list[str]]]) -> None:
    state = _state()
    for n, batch in enumerate(batches):
        before = state
        outcomes = [_outcome(f"q{n}-{i}", titles) for i, titles in enumerate(batch)]
        state = state.with_search(outcomes)
        check_transition(before, state)
        new = len(state.search_results) - len(before.search_results)
        assert 0 <= new <= state.max_sources
        state = state.next_iteration()
        check_transition(before, state)
    ids = [r.id for r in state.search_results]
    assert ids == [f"[{i}]" for i in range(1, len(ids) + 1)]
    assert len({r.location for r in state.search_results}) == len(ids)


def test_a_kept_hit_is_numbered_and_remembers_its_query() -> None:
    hit = Source(title="a", location="loc:a", text="a text", provider="p", rank=1, score=2.0)
    state = _state().with_search([QueryOutcome(query="q", provider="p", hits=(hit,))])
    assert state.search_results == (replace(hit, id="[1]", query="q"),)


def test_compaction_records_which_results_are_summaries() -> None:
    state = _state().with_search([_outcome("q", ["a", "b"])])
    once = state.with_compaction({"[2]": "short"})
    twice = once.with_compaction({"[1]": "s", "[2]": "shorter"})
    assert once.compacted == ("[2]",) and twice.compacted == ("[2]", "[1]")
    assert [r.text for r in twice.search_results] == ["s", "shorter"]
    with pytest.raises(RunError, match="compacted is not append-only"):
        check_transition(twice, replace(twice, compacted=()))


def test_removing_a_result_breaks_the_invariant() -> None:
    before = _state().with_search([_outcome("q", ["a", "b"])])
    after = replace(before, search_results=before.search_results[1:])
    with pytest.raises(RunError, match="removed or renumbered"):
        check_transition(before, after)


def test_iteration_moves_by_one_only() -> None:
    state = _state()
    with pytest.raises(RunError, match="iteration jumped"):
        check_transition(state, replace(state, iteration=2))


def test_citations_must_be_retrieved_sources() -> None:
    from guardsearch.loops.research.state import CitationRecord

    state = _state().with_search([_outcome("q", ["a"])])
    with pytest.raises(RunError, match="not a retrieved source"):
        state.with_citations([CitationRecord(id="[9]", title="x", type="web", location="y")])


def test_queries_are_never_rerun_and_are_trimmed_to_max_queries() -> None:
    state = replace(_state(), max_queries=2).with_search([_outcome("Seurat", ["a"])])
    state = state.with_queries(
        [
            Query(query="seurat "),
            Query(query="Signac"),
            Query(query="signac"),
            Query(query="Monet"),
            Query(query="Manet"),
        ]
    )
    assert [q.query for q in state.plan_queries] == ["Signac", "Monet"]


def test_ranking_prefers_sources_several_queries_found() -> None:
    state = _state().with_search([_outcome("q1", ["a", "b"]), _outcome("q2", ["c", "b"])])
    assert state.ranked()[0].title == "b"
