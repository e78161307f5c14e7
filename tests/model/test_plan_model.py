"""`guardsearch plan --problem ID --json` on the real embedded model (docs/plan.md).

A small model may or may not find a valid plan within the budget; what must hold is
the contract: every field present, every plan it calls valid really passes the
guards, the calls stay within the budget, and the tree and backtracks are consistent.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

from guardsearch import Artifact, Context
from guardsearch.apps.plan import get_problem, plan_guard
from guardsearch.cli import app

pytestmark = pytest.mark.model
pytest.importorskip("llama_cpp")

runner = CliRunner()
PROBLEM = "ops-disk-full"
BUDGET = 8


def test_plan_problem_json_on_the_embedded_model() -> None:
    result = runner.invoke(
        app,
        ["plan", "--problem", PROBLEM, "--budget-calls", str(BUDGET), "--json", "--quiet"],
    )
    assert result.exit_code in (0, 1), result.stderr
    payload = json.loads(result.stdout)
    for key in ("succeeded", "plan", "calls", "backtracks", "termination", "tree"):
        assert key in payload
    assert payload["termination"] in {
        "success",
        "budget_exhausted",
        "all_pruned",
        "backtrack_ceiling",
    }
    assert 1 <= payload["calls"] <= BUDGET
    assert payload["tree"], "the search judged at least one node"
    for node in payload["tree"]:
        assert {"step", "attempt", "passed", "feedback"} <= set(node)
        assert node["step"] in {"analysis", "recon", "strategy", "plan"}
        assert node["passed"] or node["feedback"]
    for back in payload["backtracks"]:
        assert back["depth"] >= 1 and back["reason"]
    assert (result.exit_code == 0) == payload["succeeded"]
    if payload["succeeded"]:
        guard = plan_guard(get_problem(PROBLEM), "expansive")
        artifact = Artifact(id="p", step="plan", text=json.dumps(payload["plan"]))
        verdict = asyncio.run(guard.check(artifact, Context(objective="check")))
        assert verdict.passed, verdict.feedback
    else:
        # The best plan judged is kept, with the checks it failed.
        assert any(not v["passed"] for v in payload["verdicts"])


OFFSITE = "Organise a one-day offsite for 12 people in Lisbon with a budget of 2000 euros"


def test_a_free_task_is_success_only_when_its_spec_is_met() -> None:
    """The issue's task: success means a plan addressing 12 people, Lisbon, one day and
    the 2000-euro budget with no repeated step; else `succeeded: false` with the
    verdicts that say what is missing, and the plan kept."""
    result = runner.invoke(app, ["plan", OFFSITE, "--budget-calls", "12", "--json", "--quiet"])
    assert result.exit_code in (0, 1), result.stderr
    out = json.loads(result.stdout)
    kinds = {c["kind"] for c in out["spec"]["constraints"]}
    assert {"people", "place", "duration", "budget"} <= kinds
    assert (result.exit_code == 0) == out["succeeded"]
    steps = out["plan"]["steps"] if out["plan"] else []
    if out["succeeded"]:
        text = " ".join(f"{s['action']} {s.get('detail', '')}".lower() for s in steps)
        costs = [s["cost"] for s in steps if s.get("cost") is not None]
        assert "12" in text and "lisbon" in text and "day" in text
        assert ("2000" in text) or (costs and sum(costs) <= 2000)
        actions = [s["action"] for s in steps]
        assert len(actions) == len(set(actions))
    else:
        failed = [v for v in out["verdicts"] if not v["passed"]]
        assert failed and all(v["detail"] for v in failed)
