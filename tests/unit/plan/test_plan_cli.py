"""`guardsearch plan`: the JSON contract, the problem list, errors and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from plan_helpers import (
    PLAIN,
    RISKY,
    good_outputs,
    recon_without_recovery,
    unsatisfiable,
    without_recovery,
)
from typer.testing import CliRunner

from guardsearch.apps.plan import get_problem, problems
from guardsearch.cli import app

runner = CliRunner()


def spec(tmp_path: Path, answers: list[str]) -> str:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(answers))
    return f"scripted:{path}"


def outputs(problem_id: str) -> dict[str, str]:
    return good_outputs(get_problem(problem_id))


def test_list_prints_every_problem() -> None:
    result = runner.invoke(app, ["plan", "--list"])
    assert result.exit_code == 0
    lines = result.stdout.strip().splitlines()
    assert len(lines) == len(problems())
    assert lines[0].split()[:2] == ["bug-login-empty-password", "bug_fix"]


def test_list_json_has_id_category_title() -> None:
    result = runner.invoke(app, ["plan", "--list", "--json"])
    assert result.exit_code == 0
    rows = json.loads(result.stdout)["problems"]
    assert len(rows) >= 30
    assert set(rows[0]) == {"id", "category", "title"}


def test_plan_json_contract_on_success(tmp_path: Path) -> None:
    good = outputs(PLAIN)
    model = spec(tmp_path, [good["analysis"], good["recon"], good["strategy"], good["plan"]])
    result = runner.invoke(app, ["plan", "--problem", PLAIN, "--model", model, "--json"])
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["succeeded"] is True
    assert payload["termination"] == "success"
    assert payload["plan"] == json.loads(good["plan"])
    assert payload["calls"] == 4
    assert payload["backtracks"] == []
    assert [n["step"] for n in payload["tree"]] == ["analysis", "recon", "strategy", "plan"]
    assert set(payload["tree"][0]) >= {"step", "attempt", "passed", "feedback"}
    assert payload["problem"] == PLAIN and payload["pipeline"] == "search"


def test_plan_json_reports_backtracks_with_depth_and_reason(tmp_path: Path) -> None:
    problem = get_problem(RISKY)
    good = outputs(RISKY)
    second = good_outputs(problem, take=2)
    answers = [
        good["analysis"],
        recon_without_recovery(problem),  # so the guard cannot add rollback_release itself
        good["strategy"],
        without_recovery(problem),  # dead-end: back to recon (depth 2)
        second["recon"],
        second["strategy"],
        good["plan"],
    ]
    model = spec(tmp_path, answers)
    result = runner.invoke(
        app, ["plan", "--problem", RISKY, "--model", model, "--heuristic", "rules", "--json"]
    )
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["succeeded"] is True and payload["calls"] == 7
    [back] = payload["backtracks"]
    assert back["depth"] == 2 and back["from"] == "plan" and back["to"] == "recon"
    assert back["reason"] == "heuristic" and back["feedback"].startswith("dead-end")
    assert back["rule"] == "dead-end + no path -> fundamental structural problem"
    failed = [n for n in payload["tree"] if not n["passed"]]
    assert [n["step"] for n in failed] == ["plan"]
    assert failed[0]["feedback"].startswith("dead-end: if s4 (deploy_fix) fails")


def test_plan_exits_1_with_the_best_failed_path_when_the_budget_runs_out(tmp_path: Path) -> None:
    good = outputs(PLAIN)
    bad = unsatisfiable(get_problem(PLAIN))
    model = spec(tmp_path, [good["analysis"], good["recon"], good["strategy"], bad, bad])
    result = runner.invoke(
        app,
        ["plan", "--problem", PLAIN, "--model", model, "--budget-calls", "4", "--json"],
    )
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["succeeded"] is False
    # The best plan judged is kept, with the verdict it failed.
    assert payload["plan"]["steps"] and payload["plan"] == json.loads(bad) | payload["plan"]
    failed = [v for v in payload["verdicts"] if not v["passed"]]
    assert failed and "not satisfiable" in failed[-1]["detail"]
    assert payload["termination"] == "budget_exhausted"
    assert payload["calls"] == 4
    assert [n["step"] for n in payload["path"]] == ["analysis", "recon", "strategy", "plan"]
    assert "not satisfiable" in payload["path"][-1]["feedback"]


def test_plan_plain_output_prints_the_steps(tmp_path: Path) -> None:
    good = outputs(RISKY)
    model = spec(tmp_path, [good["analysis"], good["recon"], good["strategy"], good["plan"]])
    result = runner.invoke(app, ["plan", "--problem", RISKY, "--model", model])
    assert result.exit_code == 0, result.stderr
    assert "s4: deploy_fix  (on failure: s5)" in result.stdout
    assert "4 calls" in result.stderr


def test_a_task_can_name_a_shipped_problem(tmp_path: Path) -> None:
    good = outputs(PLAIN)
    model = spec(tmp_path, [good["plan"]])
    result = runner.invoke(app, ["plan", PLAIN, "--pipeline", "single", "--model", model, "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["problem"] == PLAIN


FREE_TASK = "Migrate the billing database to the new cluster"
FREE_ANSWERS = [
    json.dumps({"problem_class": "data_migration", "key_facts": ["billing_migrated"]}),
    json.dumps({"actions": ["backup_billing_db", "migrate_billing_db", "restore_backup"]}),
    json.dumps(
        {
            "approach": "backup then migrate",
            "rationale": "a backup makes the migration safe to undo",
            "order": ["backup_billing_db", "migrate_billing_db"],
        }
    ),
    json.dumps(
        {
            "steps": [
                {"id": "s1", "action": "backup_billing_db", "detail": "full dump of billing",
                 "retry_budget": 1},
                {"id": "s2", "action": "migrate_billing_db", "detail": "copy to the new cluster",
                 "retry_budget": 2, "on_failure": "s3"},
                {"id": "s3", "action": "restore_backup", "detail": "reload the billing dump",
                 "retry_budget": 1},
            ]
        }
    ),
]  # fmt: skip


def test_a_free_task_cannot_ask_for_a_guard_that_needs_a_problem(tmp_path: Path) -> None:
    model = spec(tmp_path, FREE_ANSWERS)
    result = runner.invoke(
        app, ["plan", FREE_TASK, "--guard-level", "expansive", "--model", model, "--json"]
    )
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert "needs a problem's initial state, goal and actions" in error


def test_no_task_and_no_problem_is_a_usage_error() -> None:
    result = runner.invoke(app, ["plan", "--json"])
    assert result.exit_code == 2
    assert "give a task in words, --problem ID" in json.loads(result.stdout)["error"]


def test_plain_output_prints_the_search_tree_summary(tmp_path: Path) -> None:
    problem = get_problem(RISKY)
    good = outputs(RISKY)
    second = good_outputs(problem, take=2)
    answers = [
        good["analysis"],
        recon_without_recovery(problem),  # so the guard cannot add rollback_release itself
        good["strategy"],
        without_recovery(problem),
        second["recon"],
        second["strategy"],
        good["plan"],
    ]
    model = spec(tmp_path, answers)
    result = runner.invoke(
        app, ["plan", "--problem", RISKY, "--model", model, "--heuristic", "rules"]
    )
    assert result.exit_code == 0, result.stderr
    lines = [line.strip() for line in result.stderr.splitlines()]
    assert "search tree: 7 nodes judged" in lines
    assert "analysis  1: 1 passed" in lines
    assert "recon     2: 2 passed" in lines
    assert "plan      2: 1 goal, 1 failed" in lines
    assert "backtracks: 1" in lines
    assert (
        "plan -> recon (depth 2, heuristic): dead-end + no path -> fundamental structural "
        "problem" in lines
    )
    assert "termination: success" in lines
    assert "guard level: expansive" in lines


def test_an_unknown_problem_or_pipeline_is_a_usage_error(tmp_path: Path) -> None:
    model = spec(tmp_path, ["{}"])
    bad_problem = runner.invoke(app, ["plan", "--problem", "nope", "--json"])
    assert bad_problem.exit_code == 2
    assert "no problem 'nope'" in json.loads(bad_problem.stdout)["error"]
    bad_pipeline = runner.invoke(
        app, ["plan", "--problem", PLAIN, "--pipeline", "magic", "--model", model, "--json"]
    )
    assert bad_pipeline.exit_code == 2
    assert "unknown pipeline 'magic'" in json.loads(bad_pipeline.stdout)["error"]
