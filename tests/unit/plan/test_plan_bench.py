"""`guardsearch bench plan` through the experiment harness, on a scripted model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from plan_helpers import PLAIN, RISKY, good_outputs, misstated, step_of, without_recovery
from typer.testing import CliRunner

from guardsearch import CachedModel, DictCache, ModelRequest, ScriptedModel
from guardsearch.apps.plan import get_problem, problems
from guardsearch.apps.plan.suite import select
from guardsearch.cli import app
from guardsearch.core.errors import ConfigError
from guardsearch.experiments import trial

runner = CliRunner()


def fake_planner(request: ModelRequest) -> str:
    """A deterministic model: the first plan it writes is wrong (a dead end for a risky
    problem, a plan misstating its first step's effects otherwise: no guard repairs that);
    once the prompt carries feedback from a failure (either channel), it writes the good
    plan."""
    system = request.messages[0].content
    problem = next(p for p in problems() if system.startswith(f"Primary objective: {p.title}."))
    take = 1 + system.count("## Previous Attempt Failed")
    step = step_of(request)
    informed = "Previous Attempt Failed" in system or "was rejected" in system
    if step == "plan" and not informed:
        risky = any(a.may_fail for a in problem.actions)
        return without_recovery(problem) if risky else misstated(problem)
    return good_outputs(problem, take)[step]


@pytest.fixture
def fake_model() -> Iterator[ScriptedModel]:
    model = ScriptedModel(fake_planner, name="fake-planner")
    trial._MODELS["plan-fake"] = model
    yield model
    trial._MODELS.pop("plan-fake", None)


def test_bench_plan_writes_the_report_with_curves_categories_and_plots(
    tmp_path: Path, fake_model: ScriptedModel
) -> None:
    report = tmp_path / "report"
    result = runner.invoke(
        app,
        [
            "bench", "plan",
            "--pipelines", "single,full,search,search-blind",
            "--budgets", "1,5,6,7,10",
            "--problems", f"{PLAIN},{RISKY}",
            "--model", "plan-fake",
            "--out", str(tmp_path / "runs"),
            "--report-dir", str(report),
            "--name", "plan_test",
            "--quiet", "--json",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.stdout + result.stderr
    payload = json.loads(result.stdout)
    methods = payload["methods"]
    # single: the plain problem's wrong plan, then the retry with feedback is right (2
    # calls); the risky one's dead end is repaired by the guard's patch in its 1 call.
    assert [p["success_rate"] for p in methods["single"]["curve"]] == [0.5, 1.0, 1.0, 1.0, 1.0]
    # full never goes back: the wrong plan's feedback fixes it in place (5 calls).
    assert [p["success_rate"] for p in methods["full"]["curve"]] == [0.0, 1.0, 1.0, 1.0, 1.0]
    # search: the misstated step is the plan's own fix -> the plan again, with the fix (5
    # calls); a dead end whose recovery action recon listed is repaired (4 calls).
    assert [p["success_rate"] for p in methods["search"]["curve"]] == [0.0, 1.0, 1.0, 1.0, 1.0]
    # blind: always one level up (6 calls); the repaired dead end needs no backtrack.
    assert [p["success_rate"] for p in methods["search-blind"]["curve"]] == [
        0.0, 0.5, 1.0, 1.0, 1.0,
    ]  # fmt: skip
    assert methods["search"]["backtrack_rate"] == 0.0
    assert methods["full"]["backtrack_rate"] == 0.0
    assert any(d["method"] == "search" and d["vs"] == "search-blind" for d in payload["deltas"])

    card = json.loads((report / "plan_test.json").read_text())
    search_cats = card["categories"]["search"]
    assert search_cats["bug_fix"]["backtrack_depths"] == {}
    assert search_cats["bug_fix"]["backtrack_steps"] == {}
    assert card["categories"]["search-blind"]["bug_fix"]["backtrack_depths"] == {"1": 1}
    markdown = (report / "plan_test.md").read_text()
    assert "## Pass rate vs budget" in markdown
    assert "## Per problem category (at the largest budget)" in markdown
    assert "## Heuristic vs blind DFS" in markdown
    assert "## Steering: repeats, repairs, failures prevented" in markdown
    assert card["repeats"]["search"]["calls"] == 9  # 5 + 4: no answer repeated itself
    assert card["repeats"]["search"]["repeats"] == 0
    assert card["repeats"]["search"]["repairs"] == 1
    assert card["repeats"]["search"]["decisions"] == {"bug_fix": {"0": 1}}
    assert card["repeats"]["full"]["decisions"] == {"bug_fix": {"0": 1}}
    for png in ("plan_test_budget.png", "plan_test_depths.png"):
        assert (report / png).stat().st_size > 1000
    # Shared prefixes were answered once: full's first four calls are search's.
    assert fake_model.calls < sum(m["mean_calls"] * m["n"] for m in card["methods"].values())


def test_the_memo_answers_a_repeated_request_once() -> None:
    inner = ScriptedModel(["one", "two"])
    memo = CachedModel(inner, DictCache())
    request = ModelRequest(messages=())
    first = asyncio.run(memo.complete(request))
    again = asyncio.run(memo.complete(request))
    assert first.text == again.text == "one"
    assert inner.calls == 1 and memo.hits == 1
    assert again.usage.calls == 1  # still booked as a call


def test_problem_selectors() -> None:
    assert len(select(None)) == len(problems())
    assert [p.id for p in select(f"{PLAIN},{RISKY}")] == [PLAIN, RISKY]
    picked = select({"per_category": 2})
    assert len(picked) == 10
    assert {p.category for p in picked} == {p.category for p in problems()}
    assert select({"categories": ["refactor"]})[0].category == "refactor"
    with pytest.raises(ConfigError, match="unknown categories"):
        select({"categories": ["chores"]})
    with pytest.raises(ConfigError, match="no problem 'zzz'"):
        select(["zzz"])
    assert get_problem(PLAIN).category == "bug_fix"


def test_repeats_counts_duplicate_answers_by_step() -> None:
    from guardsearch.apps.plan.scorecard import repeats
    from guardsearch.experiments.trial import TrialResult

    def result(key: str, method: str, calls: int) -> TrialResult:
        return TrialResult(
            key=key, problem=PLAIN, method=method, trial=0, budget=30, model="m",
            succeeded=False, termination="backtrack_ceiling", calls=calls,
            prompt_tokens=0, completion_tokens=0, cached_prompt_tokens=0, seconds=0.0,
        )  # fmt: skip

    events = {
        "a": [
            {"kind": "candidate_dropped", "step": "recon", "data": {"reason": "duplicate"}},
            {"kind": "candidate_dropped", "step": "plan", "data": {"reason": "unparseable"}},
        ],
        "b": [{"kind": "candidate_dropped", "step": "recon", "data": {"reason": "duplicate"}}],
    }
    events["b"].append(
        {
            "kind": "guard_verdict",
            "step": "plan",
            "data": {"passed": False, "feedback": "dead-end: if s2 (x) fails, no path reaches"},
        }
    )
    events["b"].append({"kind": "patch_applied", "step": "plan", "data": {"passed": True}})
    events["a"].append({"kind": "patch_applied", "step": "plan", "data": {"passed": False}})
    found = repeats([result("a", "search", 5), result("b", "search", 3)], events.__getitem__)
    # The counts are core/steering.py's: 2 repeats + 1 judged plan = 3 outputs.
    assert found == {
        "search": {
            "calls": 8,
            "outputs": 3,
            "repeats": 2,
            "repeat_share": 0.6667,
            "repairs": 1,  # only a repair that passed was accepted
            "prevented": 0,
            "by_step": {"recon": 2},
            "causes": {"fundamental structural problem (depth 2)": 1},
            "decisions": {},
        }
    }


@pytest.mark.parametrize("pipeline", ["single", "full", "search", "search-blind"])
async def test_a_run_at_a_smaller_budget_is_the_large_run_cut_short(pipeline: str) -> None:
    # What derive_budgets relies on: success under cap B <=> the uncapped run used <= B calls.
    from guardsearch import Budget, max_calls
    from guardsearch.apps.plan import plan_search

    for problem_id in (PLAIN, RISKY):
        problem = get_problem(problem_id)
        big = await plan_search(
            problem,
            pipeline=pipeline,
            model=ScriptedModel(fake_planner),
            budget=Budget(max_calls(30)),
        )
        for cap in range(1, 9):
            small = await plan_search(
                problem,
                pipeline=pipeline,
                model=ScriptedModel(fake_planner),
                budget=Budget(max_calls(cap)),
            )
            assert small.succeeded == (big.succeeded and big.calls <= cap)
            if small.succeeded:
                assert small.answer == big.answer and small.calls == big.calls
