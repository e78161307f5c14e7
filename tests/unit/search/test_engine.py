"""The expansion engine's safeguards: dedup, pre-filter, goal pinning, determinism,
path summaries, repairs, budget checks and events."""

from __future__ import annotations

import pytest
from search_helpers import ByStep, CountingSpace, path_of, pipeline, step_of

from guardsearch import (
    Budget,
    Context,
    GuardResult,
    ModelRequest,
    ScriptedModel,
    Step,
    max_calls,
)
from guardsearch.search import StepSpace, search
from guardsearch.search.summary import SUMMARY_STEP, estimate_tokens, summarize_path


def counting_guard() -> tuple[list[str], object]:
    seen: list[str] = []

    def guard(value: str) -> bool:
        seen.append(value)
        return True

    return seen, guard


async def test_a_duplicate_is_dropped_before_evaluation_and_costs_no_model_call() -> None:
    space = CountingSpace(goal=99, depth_limit=1)
    model = ScriptedModel(["3, 3, 4, 3, 4"])
    result = await search(space, "bfs", model=model)
    assert space.evaluated == [3, 4]  # five proposals, two distinct states, two evaluations
    dropped = result.trace.of_kind("candidate_dropped")
    assert [e.data["reason"] for e in dropped] == ["duplicate"] * 3
    assert {e.data["duplicate_of"] for e in dropped} == {"n1", "n2"}
    assert model.calls == 1


async def test_dedup_saves_model_backed_evaluations_across_expansions() -> None:
    judge_calls: list[ModelRequest] = []

    def answer(request: ModelRequest) -> str:
        if request.json_schema is not None:  # the evaluator's rubric
            judge_calls.append(request)
            return '{"q1": false}'
        return "the same draft"

    from guardsearch.guards.evaluator import Evaluator

    step = Step(name="draft", prompt="Write it.", guard=Evaluator(rubric=["Is it good?"]))
    space = StepSpace(objective="Write a draft", steps=[step])
    result = await search(space, "refine", model=ScriptedModel(answer), rmax=3)
    assert result.termination == "all_pruned"
    # Three proposer calls, one evaluation: the two repeats were never judged.
    assert len(judge_calls) == 1
    assert result.calls == 3 + 1
    assert len(result.trace.of_kind("candidate_dropped")) == 2


async def test_the_prefilter_settles_a_candidate_before_the_evaluator_runs() -> None:
    seen, guard = counting_guard()
    space = StepSpace(
        objective="Say hello",
        steps=[Step(name="greet", prompt="Greet.", guard=guard)],  # type: ignore[arg-type]
        prefilter_guard=lambda v: v.startswith("hello") or "must start with hello",
    )
    result = await search(space, "refine", model=ScriptedModel(["bye", "hello there"]))
    assert result.succeeded
    assert seen == ["hello there"]  # "bye" never reached the evaluator
    verdicts = result.trace.of_kind("guard_verdict")
    assert [e.data["stage"] for e in verdicts] == ["prefilter", "evaluate"]
    assert result.trace.of_kind("candidate_dropped")[0].data["reason"] == "prefilter"


async def test_an_unparseable_candidate_is_pruned_without_evaluation() -> None:
    space = CountingSpace(goal=5, depth_limit=1)
    result = await search(space, "bfs", model=ScriptedModel(["five, 5"]))
    assert result.succeeded
    assert space.evaluated == [5]
    bad = next(n for n in result.tree if n.text == "five")
    assert bad.status == "failed" and bad.pruned and bad.parse_error


async def test_a_failed_hard_check_gives_h_infinity_and_is_never_expanded() -> None:
    space = CountingSpace(goal=9, depth_limit=2, hard_fail={1}, scores={1: 1.0, 2: 0.2})
    model = ScriptedModel(lambda r: {"start": "1, 2", "2": "9"}.get(path_of(r), "0"))
    result = await search(space, "astar", model=model)
    assert result.succeeded
    one = next(n for n in result.tree if n.value == 1 and n.depth == 1)
    assert one.pruned and one.status == "failed"
    assert "1" not in [path_of(r) for r in model.requests]


async def test_every_prompt_starts_with_the_pinned_objective() -> None:
    from guardsearch.guards.evaluator import Evaluator

    def answer(request: ModelRequest) -> str:
        if request.json_schema is not None:
            return '{"q1": true}'
        return "draft text" if "critic" not in request.messages[0].content else "No flaws."

    evaluator = Evaluator(rubric=["Is it a draft?"], critic=True)
    model = ScriptedModel(answer)
    space = StepSpace(
        objective="Draft the release note",
        steps=[Step(name="a", prompt="Draft."), Step(name="b", prompt="Polish.", guard=evaluator)],
    )
    result = await search(space, "dfs", model=model)
    assert result.succeeded
    assert len(model.requests) == 4  # two proposers, a critic and a judge
    for request in model.requests:
        assert request.messages[0].content.startswith("Primary objective: Draft the release note")


async def test_searches_are_deterministic_by_default_and_samples_use_explicit_seeds() -> None:
    model = ScriptedModel(lambda r: f"seed {r.seed}")
    space = pipeline(("draft",))
    await search(space, "beam", model=model, samples=3, seed=10)
    assert [(r.temperature, r.seed) for r in model.requests] == [(0.0, 10), (0.0, 11), (0.0, 12)]


async def test_the_search_temperature_overrides_the_steps_own() -> None:
    model = ScriptedModel(["ok"])
    space = StepSpace(objective="x", steps=[Step(name="s", prompt="go", temperature=0.9)])
    await search(space, "dfs", model=model)
    assert model.requests[0].temperature == 0.0
    model = ScriptedModel(["ok"])
    await search(space, "dfs", model=model, temperature=0.7)
    assert model.requests[0].temperature == 0.7


async def test_the_path_summary_keeps_deep_contexts_under_the_token_cap() -> None:
    steps = [f"s{i}" for i in range(30)]
    model = ScriptedModel(lambda r: "word " * 120)  # ~200 estimated tokens per step
    space = pipeline(steps, guard=lambda v: True)
    result = await search(space, "dfs", model=model, path_token_cap=500)
    assert result.succeeded
    last = result.path[-1].context
    used = sum(estimate_tokens(a) + estimate_tokens(b) for a, b in last.artifacts)
    assert used <= 500
    assert last.artifacts[0][0] == SUMMARY_STEP
    assert last.artifacts[-1][0] == "s29"
    assert model.requests[-1].messages[0].content.startswith("Primary objective:")


def test_summarize_path_leaves_short_contexts_alone() -> None:
    ctx = Context(objective="o", artifacts=(("a", "short"),))
    assert summarize_path(ctx, 100) is ctx


async def test_a_guards_json_patch_repairs_a_candidate_without_a_new_call() -> None:
    def n_is_two(value: dict[str, int]) -> GuardResult | bool:
        if value["n"] == 2:
            return True
        return GuardResult(
            passed=False,
            feedback="n must be 2",
            patch=({"op": "replace", "path": "/n", "value": 2},),
        )

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    space = StepSpace(
        objective="Pick two", steps=[Step(name="n", prompt="n?", schema=schema, guard=n_is_two)]
    )
    model = ScriptedModel(['{"n": 3}'])
    result = await search(space, "dfs", model=model)
    assert result.succeeded and result.answer == {"n": 2}
    assert model.calls == 1
    assert result.trace.of_kind("patch_applied")[0].data["passed"] is True


async def test_an_expansion_that_cannot_fit_the_budget_is_not_started() -> None:
    model = ScriptedModel(["x"], repeat_last=True)
    result = await search(
        pipeline(("draft",)), "beam", model=model, samples=3, budget=Budget(max_calls(2))
    )
    assert result.termination == "budget_exhausted"
    assert model.calls == 0


async def test_an_expansion_cut_short_leaves_nothing_half_done() -> None:
    from guardsearch.guards.evaluator import Evaluator

    def answer(request: ModelRequest) -> str:
        return '{"q1": true}' if request.json_schema else f"draft {request.seed}"

    step = Step(name="d", prompt="Draft.", guard=Evaluator(rubric=["ok?"]))
    space = StepSpace(objective="Draft", steps=[step])
    result = await search(
        space, "consensus", model=ScriptedModel(answer), budget=Budget(max_calls(3)), n=2
    )
    # Call 1 proposes, 2 judges, 3 proposes the second candidate, 4 (its judge) is refused.
    assert result.termination == "budget_exhausted"
    assert [n.text for n in result.tree if n.parent] == ["draft 0"]
    assert result.state.expansions == 1


async def test_every_expansion_is_bracketed_by_events() -> None:
    result = await search(pipeline(), "dfs", model=ByStep().model())
    phases = [e.data["phase"] for e in result.trace.of_kind("expansion")]
    assert phases == ["start", "end"] * 4
    assert len(result.trace.of_kind("guard_verdict")) == 4
    assert len(result.trace.of_kind("model_call")) == 4


async def test_the_max_expansions_option_is_a_budget() -> None:
    model = ScriptedModel(["BAD no"], repeat_last=True)
    result = await search(pipeline(), "dfs", model=model, max_expansions=2)
    assert result.termination == "budget_exhausted"
    assert result.expansions == 2


@pytest.mark.parametrize("strategy", ["dfs", "bfs", "astar", "refine", "consensus"])
async def test_no_context_leaks_between_sibling_candidates(strategy: str) -> None:
    model = ScriptedModel(lambda r: f"{step_of(r)} with seed {r.seed}")
    space = pipeline(("first", "second"), guard=lambda v: True)
    extra = {"n": 1} if strategy == "consensus" else {}
    result = await search(space, strategy, model=model, samples=2, **extra)
    firsts = [n for n in result.tree if n.step == "first"]
    assert len(firsts) == 2
    a, b = firsts
    assert a.context is not b.context
    assert [t for _, t in a.context.artifacts] == [a.text]
    assert [t for _, t in b.context.artifacts] == [b.text]
    for child in result.tree:
        if child.step == "second":
            parent = result.tree[child.parent or ""]
            other = b if parent.id == a.id else a
            assert all(other.text != t for _, t in child.context.artifacts)
