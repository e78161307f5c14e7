"""The plan app, registered once: durable runs, POST /solve and the bench harness find it."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from plan_helpers import PLAIN, RISKY, by_step, good_plan

from guardsearch.apps.plan import get_problem, plan_search
from guardsearch.apps.plan.heuristic import FixHeuristic
from guardsearch.apps.plan.suite import PlanSuite
from guardsearch.core.errors import ConfigError
from guardsearch.experiments import resolve_suite
from guardsearch.registry import build_app, get_app
from guardsearch.runs import RunSpec, create_run, execute_run
from guardsearch.search import RuleHeuristic
from guardsearch.server import create_app
from guardsearch.store.sqlite import SqliteRunStore


def test_the_plan_app_builds_the_space_plan_search_searches() -> None:
    setup = build_app("plan", {"problem": PLAIN, "guard_level": "medium"}, "dfs")
    assert [s.name for s in setup.space.steps] == ["analysis", "recon", "strategy", "plan"]
    assert setup.space.problem == get_problem(PLAIN)
    assert setup.options["temperature"] == 0.0  # the Schedule warms retries
    assert isinstance(setup.options["heuristic"], FixHeuristic)
    rules = build_app("plan", {"problem": PLAIN, "heuristic": "rules"}, "dfs")
    assert isinstance(rules.options["heuristic"], RuleHeuristic)
    single = build_app("plan", {"task": "ship the release", "pipeline": "single"}, "beam")
    assert [s.name for s in single.space.steps] == ["plan"]
    assert "heuristic" not in single.options  # only dfs backtracks by it


@pytest.mark.parametrize(
    ("problem", "message"),
    [
        ({}, "a free task needs its text"),
        ({"problem": "nope"}, "no problem 'nope'"),
        ({"problem": PLAIN, "file": "/etc/passwd"}, r"unknown keys \['file'\]"),
        ({"task": 3}, "'task' must be a string"),
        ({"task": "x", "pipeline": "magic"}, "unknown pipeline 'magic'"),
    ],
)
def test_a_bad_plan_problem_is_a_config_error(problem: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_app("plan", problem, "dfs")


async def test_a_durable_plan_run_ends_with_the_plan_plan_search_finds(tmp_path: Path) -> None:
    store = SqliteRunStore(str(tmp_path / "runs.db"))
    spec = RunSpec(app="plan", problem={"problem": RISKY}, strategy="dfs", model="scripted")
    run = create_run(spec, store)
    record = await execute_run(run.id, store, model=by_step(RISKY).model())
    assert record.status == "succeeded", record.error
    assert record.result is not None
    assert json.loads(json.dumps(record.result["answer"])) == good_plan(get_problem(RISKY))
    direct = await plan_search(get_problem(RISKY), model=by_step(RISKY).model())
    assert record.calls == direct.calls


async def test_post_solve_serves_the_plan_app_with_its_default_strategy() -> None:
    app = create_app(model=by_step(PLAIN).model(), providers=[])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        response = await c.post("/solve", json={"app": "plan", "problem": {"problem": PLAIN}})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["app"] == "plan" and body["strategy"] == "dfs"
    assert body["succeeded"] is True and body["calls"] == 4


def test_the_bench_harness_finds_the_plan_suite_by_the_app_name() -> None:
    assert isinstance(resolve_suite("plan"), PlanSuite)
    assert resolve_suite("plan") is resolve_suite("guardsearch.apps.plan.suite:suite")
    assert get_app("plan").strategy == "dfs"
