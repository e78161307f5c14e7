"""The shipped problem set validates: ≥ 30 problems over five categories, each
solvable within R_max, and every schema a model sees is bounded for the grammar."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from guardsearch import Artifact, Context
from guardsearch.apps.plan import (
    CATEGORIES,
    ExpansivePlanGuard,
    complete_plan,
    generation_schema,
    get_problem,
    load_problem_file,
    plan_schema,
    problems,
    reference_plan,
)
from guardsearch.apps.plan.step_guards import analysis_schema, recon_schema, strategy_schema
from guardsearch.core.errors import ConfigError
from guardsearch.models.llamacpp import schema_to_gbnf

ALL = problems()


def test_the_set_has_at_least_30_problems_in_every_category() -> None:
    assert len(ALL) >= 30
    counts = Counter(p.category for p in ALL)
    assert set(counts) == set(CATEGORIES)
    assert min(counts.values()) >= 5
    assert len({p.id for p in ALL}) == len(ALL)


def test_the_set_mixes_risky_and_plain_problems() -> None:
    risky = [p for p in ALL if any(a.may_fail for a in p.actions)]
    assert 10 <= len(risky) <= len(ALL) - 10


@pytest.mark.parametrize("problem", ALL, ids=lambda p: p.id)
async def test_every_problem_has_a_plan_the_expansive_guard_accepts(problem: Any) -> None:
    plan = reference_plan(problem)
    assert plan.total_retry_budget <= problem.r_max
    artifact = Artifact(id="p", step="plan", text=plan.model_dump_json(exclude_none=True))
    verdict = await ExpansivePlanGuard(problem).check(artifact, Context(objective="x"))
    assert verdict.passed, verdict.feedback


@pytest.mark.parametrize("problem", ALL, ids=lambda p: p.id)
def test_every_goal_fact_needs_planning(problem: Any) -> None:
    # Some goal fact is not initially true, and the description lists every action.
    assert set(problem.goal) - set(problem.initial)
    text = problem.describe()
    assert all(f"- {a.name}: " in text for a in problem.actions)


def _bounded(node: Any) -> list[str]:
    """Paths of strings without a bound and arrays without maxItems."""
    loose: list[str] = []

    def walk(n: Any, where: str) -> None:
        if isinstance(n, dict):
            kind = n.get("type")
            fixed = any(k in n for k in ("enum", "const", "pattern"))
            if kind == "string" and not fixed and "maxLength" not in n:
                loose.append(where)
            if kind == "array" and "maxItems" not in n and "const" not in n:
                loose.append(where)
            for k, v in n.items():
                walk(v, f"{where}/{k}")
        elif isinstance(n, list):
            for i, v in enumerate(n):
                walk(v, f"{where}/{i}")

    walk(node, "")
    return loose


@pytest.mark.parametrize("problem", ALL[:8], ids=lambda p: p.id)
def test_every_schema_is_valid_bounded_and_grammar_ready(problem: Any) -> None:
    actions = list(problem.action_names[:2])
    schemas = [
        plan_schema(),
        generation_schema(problem),
        generation_schema(problem, actions),
        analysis_schema(problem),
        recon_schema(problem),
        strategy_schema(problem, actions),
    ]
    for schema in schemas:
        jsonschema.Draft202012Validator.check_schema(schema)
        assert _bounded(schema) == []
    for schema in schemas[1:]:
        assert "root ::=" in schema_to_gbnf(schema)


def test_the_reference_plan_validates_against_both_schemas() -> None:
    problem = get_problem("feat-dark-mode")
    plan = reference_plan(problem).model_dump(exclude_none=True)
    jsonschema.validate(plan, plan_schema())
    compact = {
        "steps": [
            {k: v for k, v in s.items() if k not in ("pre", "effects")} for s in plan["steps"]
        ]
    }
    jsonschema.validate(compact, generation_schema(problem))
    assert complete_plan(problem, compact) == plan


def test_an_unknown_problem_id_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="no problem 'nope'"):
        get_problem("nope")


def test_a_problem_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(
        "id: my-task\ncategory: feature\ntitle: Ship the widget\ntask: Ship it.\n"
        "initial: [idea]\ngoal: [shipped]\nr_max: 3\n"
        "actions:\n  - {name: build, pre: [idea], effects: [built]}\n"
        "  - {name: ship, pre: [built], effects: [shipped]}\n"
    )
    problem = load_problem_file(path)
    assert problem.id == "my-task"
    assert [s.action for s in reference_plan(problem).steps] == ["build", "ship"]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[]", "expected a list of problems"),
        ("id: x-1\ncategory: chores\n", "problem #1 at category"),
        (
            "id: x-1\ncategory: feature\ntitle: T t\ntask: t t t\ninitial: [a]\ngoal: [a]\n"
            "r_max: 2\nactions: [{name: b, effects: [a]}]\n",
            "the goal already holds initially",
        ),
        (
            "id: x-1\ncategory: feature\ntitle: T t\ntask: t t t\ninitial: [a]\ngoal: [B c]\n"
            "r_max: 2\nactions: [{name: b, effects: [c]}]\n",
            "not a normalised fact name",
        ),
        (
            "id: x-1\ncategory: feature\ntitle: T t\ntask: t t t\ninitial: [a]\ngoal: [c]\n"
            "r_max: 2\nactions: [{name: b, effects: [c], may_fail: true}]\n",
            "risky actions need safe facts",
        ),
        ("id: [unclosed", "not valid YAML/JSON"),
    ],
)
def test_a_bad_problem_file_gets_a_clear_error(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=error):
        load_problem_file(path)


def test_a_missing_problem_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read problem file"):
        load_problem_file(tmp_path / "none.yaml")


def test_an_unsolvable_problem_is_reported_by_the_reference_planner(tmp_path: Path) -> None:
    path = tmp_path / "stuck.yaml"
    path.write_text(
        "id: stuck\ncategory: refactor\ntitle: Stuck one\ntask: Cannot be done.\n"
        "initial: [a]\ngoal: [z]\nr_max: 3\nactions: [{name: b, pre: [y], effects: [z]}]\n"
    )
    with pytest.raises(ConfigError, match="no sequence of actions reaches the goal"):
        reference_plan(load_problem_file(path))
