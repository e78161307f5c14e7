"""The review loop: stops at the threshold, at the budget, escalates, answers with caveats."""

from __future__ import annotations

import json
from pathlib import Path

from review_helpers import ListTask

from guardsearch.loops.review import (
    DomainThresholds,
    Refinement,
    ReviewConfig,
    ReviewLoop,
    write_transcript,
)
from guardsearch.models.scripted import ScriptedModel


def ref(level: str, target: str, neg: str = "") -> Refinement:
    return Refinement(
        level=level,  # type: ignore[arg-type]
        reason=f"{level} for {target}",
        target=target,
        add_negative_keywords=[neg] if neg else [],
    )


def model() -> ScriptedModel:
    return ScriptedModel(["ok"], repeat_last=True)


def config(**kw: object) -> ReviewConfig:
    base: dict[str, object] = {"thresholds": DomainThresholds({"docs": 0.5}), "min_items": 2}
    return ReviewConfig(**{**base, **kw})  # type: ignore[arg-type]


async def test_first_attempt_meeting_the_threshold_stops_without_refining() -> None:
    task = ListTask({"start": ["good1", "good2", "bad1"]})
    run = await ReviewLoop(task, model(), config()).run("find things")
    assert run.stop_reason == "threshold_met"
    assert len(run.attempts) == 1 and task.applied == []
    assert run.attempts[0].report.suggested_refinement is None
    assert [i.key for i in run.items] == ["good1", "good2"]
    assert run.caveats == [] and "Caveats" not in run.answer


async def test_retry_applies_the_suggested_refinement_until_the_threshold_is_met() -> None:
    task = ListTask(
        {"start": ["good1", "bad1", "bad2", "bad3"], "clean": ["good1", "good2", "bad1"]},
        offer={"keywords": [ref("keywords", "clean", "bad")]},
    )
    run = await ReviewLoop(task, model(), config()).run("find things")
    assert run.stop_reason == "threshold_met"
    first, second = run.attempts
    assert not first.report.meets_threshold
    assert first.report.suggested_refinement == ref("keywords", "clean", "bad")
    assert second.applied == ref("keywords", "clean", "bad")
    assert second.report.meets_threshold
    # verdicts are cached: already judged candidates are not judged (paid) again
    assert task.judged.count("good1") == 1 and second.usage.calls == 1
    assert run.history.records[0].quality_before == 0.25
    assert run.history.records[0].quality_after == round(2 / 3, 4)


async def test_retry_stops_at_the_budget_before_spending() -> None:
    task = ListTask(
        {"start": ["bad1", "bad2", "good1"], "more": ["bad3", "bad4", "good2", "bad5"]},
        offer={"keywords": [ref("keywords", "more", "x"), ref("keywords", "more", "y")]},
    )
    # plan 1 call + attempt 1 (3 judge calls) = 4; attempt 2 may cost 3 more -> 7 > 6
    scripted = model()
    run = await ReviewLoop(task, scripted, config()).run("find things", budget=6)
    assert run.stop_reason == "budget_exhausted"
    assert len(run.attempts) == 1 and task.applied == []
    assert scripted.calls == 4
    assert any("budget ran out" in c for c in run.caveats)
    assert any(e.data.get("phase") == "budget_stop" for e in run.trace.events)


async def test_escalation_order_keywords_then_sources_then_replan() -> None:
    task = ListTask(
        {
            "start": ["good1", "bad1", "bad2", "bad3"],
            "kw": ["good1", "bad1", "bad2", "bad4"],
            "src": ["good1", "bad1", "bad2", "bad5"],
            "replanned": ["good1", "good2", "good3"],
        },
        offer={
            "keywords": [ref("keywords", "kw", "a")],
            "sources": [ref("sources", "src")],
            "replan": [ref("replan", "bad")],
        },
    )
    run = await ReviewLoop(task, model(), config(max_attempts=5)).run("find things")
    assert task.applied == ["keywords", "sources", "replan"]
    assert [a.applied.level if a.applied else None for a in run.attempts] == [
        None,
        "keywords",
        "sources",
        "replan",
    ]
    assert run.stop_reason == "threshold_met"


async def test_low_quality_to_the_end_answers_with_caveats(tmp_path: Path) -> None:
    task = ListTask({"start": ["good1", "bad1", "bad2", "bad3"]})
    run = await ReviewLoop(task, model(), config()).run("find things")
    assert run.stop_reason == "no_refinement"
    assert run.items and "Caveats:" in run.answer
    assert any("below the docs threshold: 25% < 50%" in c for c in run.caveats)
    assert any("Only 1 of the 2" in c for c in run.caveats)
    path = write_transcript(run, tmp_path / "t.json")
    data = json.loads(path.read_text())
    assert data["reflection"]["success_criteria"] == "3 verified items"
    assert data["attempts"][0]["quality_report"]["rejection_breakdown"] == {"bad": 3}
    assert any(e["data"].get("phase") == "reviewed" for e in data["events"])


async def test_a_plan_failure_ends_the_run_with_an_error_not_a_crash() -> None:
    task = ListTask({"start": []})
    run = await ReviewLoop(task, ScriptedModel([]), config()).run("find things")
    assert (
        run.stop_reason == "model_error" and not run.succeeded and run.error
    )  # the script ran dry


async def test_a_review_run_is_an_outcome_serialised_like_every_family() -> None:
    task = ListTask({"start": ["good1", "good2", "bad1"]})
    run = await ReviewLoop(task, model(), config()).run("find things")
    assert run.succeeded and run.stop_reason == "threshold_met"
    data = run.as_dict()
    assert list(data)[:5] == ["succeeded", "stop_reason", "run_id", "usage", "seconds"]
    assert data["run_id"].startswith("run-") and data["history_run"] == run.history_run == 1
    assert data["usage"] == run.usage.as_dict()
    assert [i["key"] for i in data["items"]] == ["good1", "good2"]
    assert run.transcript() == {**data, "events": [e.as_dict() for e in run.trace.events]}
    json.dumps(data)


async def test_the_attempt_cap_is_the_core_max_iterations_stop() -> None:
    task = ListTask(
        {"start": ["bad1", "good1"], "more": ["bad2", "bad3"]},
        offer={"keywords": [ref("keywords", "more", "x")]},
    )
    run = await ReviewLoop(task, model(), config(max_attempts=1)).run("find things")
    assert run.stop_reason == "max_iterations"
