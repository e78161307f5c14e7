"""The refinement history across runs: per-run escalation, learned order, a history file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from review_helpers import ListTask

from guardsearch.core.errors import ConfigError
from guardsearch.loops.review import (
    DomainThresholds,
    Escalation,
    Refinement,
    RefinementHistory,
    ReviewConfig,
    ReviewLoop,
    load_history,
    save_history,
)
from guardsearch.models.scripted import ScriptedModel

BATCHES = {
    "start": ["good1", "bad1", "bad2", "bad3"],
    "kw": ["good1", "bad1", "bad2", "bad4"],
    "src": ["good1", "bad1", "bad2", "bad5"],
    "replanned": ["good1", "good2", "good3"],
}


def ref(level: str, target: str) -> Refinement:
    return Refinement(level=level, reason=f"{level} for {target}", target=target)  # type: ignore[arg-type]


def offers() -> dict[str, list[Refinement]]:
    return {
        "keywords": [ref("keywords", "kw")],
        "sources": [ref("sources", "src")],
        "replan": [ref("replan", "bad")],
    }


def config() -> ReviewConfig:
    return ReviewConfig(thresholds=DomainThresholds({"docs": 0.5}), min_items=2, max_attempts=5)


def model() -> ScriptedModel:
    return ScriptedModel(["ok"], repeat_last=True)


async def test_a_shared_history_is_reused_by_the_next_run_not_exhausted_by_it() -> None:
    history = RefinementHistory()
    first_task = ListTask(dict(BATCHES), offer=offers())
    first = await ReviewLoop(first_task, model(), config(), history).run("find things")
    assert first_task.applied == ["keywords", "sources", "replan"]
    assert first.stop_reason == "threshold_met"

    # the same task again, same history: the replan raised quality last time, so it is
    # tried first; the first run's replan does not count against this run's max_replans
    second_task = ListTask(dict(BATCHES), offer=offers())
    second = await ReviewLoop(second_task, model(), config(), history).run("find things")
    assert second_task.applied == ["replan"]
    assert second.stop_reason == "threshold_met"
    assert second.history_run == first.history_run + 1
    learned = [r for r in history.records if r.run == second.history_run]
    assert [(r.refinement.level, r.learned, r.domain) for r in learned] == [
        ("replan", True, "docs")
    ]
    # each run's transcript shows its own refinements only
    assert len(first.transcript()["refinement_history"]) == 3
    assert len(second.transcript()["refinement_history"]) == 1
    refine_events = [e.data for e in second.trace.events if e.data.get("phase") == "refine"]
    assert refine_events[0]["learned"] is True


async def test_escalation_restarts_per_run_when_nothing_was_learned() -> None:
    # the first run escalated to a replan that did not help; the next run starts at
    # keywords again and may replan again
    history = RefinementHistory()
    flat = {**BATCHES, "replanned": ["good1", "bad1", "bad2", "bad6"]}
    task = ListTask(dict(flat), offer=offers())
    run = await ReviewLoop(task, model(), config(), history).run("find things")
    assert task.applied == ["keywords", "sources", "replan"]
    assert run.stop_reason == "no_refinement"
    again = ListTask(dict(flat), offer=offers())
    await ReviewLoop(again, model(), config(), history).run("find things")
    assert again.applied == ["keywords", "sources", "replan"]


def test_escalation_reads_one_runs_records_and_ignores_learned_jumps() -> None:
    escalation = Escalation(min_gain=0.05, max_replans=1)
    history = RefinementHistory()
    one = history.begin_run()
    history.applied(1, ref("keywords", "a"), 0.2, run=one)
    history.outcome(0.2, run=one)
    history.applied(2, ref("replan", "a"), 0.2, run=one)
    history.outcome(0.2, run=one)
    assert escalation.levels(history.of_run(one)) == []
    two = history.begin_run()
    assert two == one + 1
    assert escalation.levels(history.of_run(two)) == ["keywords", "sources", "replan"]
    # a learned jump to the replan that failed: the cheaper levels are still open
    history.applied(1, ref("replan", "a"), 0.2, run=two, learned=True)
    history.outcome(0.1, run=two)
    assert escalation.levels(history.of_run(two)) == ["keywords", "sources"]


def test_history_learns_by_domain_and_prefers_what_helped_in_earlier_runs() -> None:
    history = RefinementHistory()
    run = history.begin_run()
    history.applied(1, ref("sources", "person"), 0.2, run=run, domain="art")
    history.outcome(0.6, run=run)
    history.applied(2, ref("keywords", "person"), 0.6, run=run, domain="docs")
    history.outcome(0.5, run=run)
    now = history.begin_run()
    kw, src = ref("keywords", "person"), ref("sources", "person")
    # what helped before (in this domain) comes first; within a run nothing is tried twice
    assert history.proven([kw, src], run=now, domain="art", min_gain=0.05) == [src]
    assert history.proven([kw, src], run=now, domain="docs", min_gain=0.05) == []
    assert history.rank([kw, src], run=now, domain="art") == [src, kw]
    history.applied(1, src, 0.2, run=now, domain="art")
    assert history.rank([kw, src], run=now, domain="art") == [kw]
    assert history.proven([src], run=now, domain="art", min_gain=0.05) == []


def test_history_file_round_trip_atomic_and_merging(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "history.json"
    assert load_history(path).records == []  # a missing file is an empty history
    history = RefinementHistory()
    run = history.begin_run()
    history.applied(1, ref("keywords", "person"), 0.2, run=run, domain="art")
    history.outcome(0.5, run=run)
    save_history(history, path, run=run)
    # another run saved meanwhile: its records are kept and this run gets a new id
    save_history(history, path, run=run)
    loaded = load_history(path)
    assert [r.run for r in loaded.records] == [1, 2]
    assert loaded.records[0].gain == pytest.approx(0.3)
    assert loaded.records[0].domain == "art"
    assert json.loads(path.read_text())["records"][0]["refinement"]["target"] == "person"
    assert sorted(p.name for p in path.parent.iterdir()) == ["history.json"]  # no temp files


@pytest.mark.parametrize("text", ["{not json", '{"records": [{"attempt": "x"}]}', "[1, 2]"])
def test_a_broken_history_file_is_a_clear_error_and_is_not_overwritten(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "history.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match="refinement history"):
        load_history(path)
    with pytest.raises(ConfigError, match="refinement history"):
        save_history(RefinementHistory(), path)
    assert path.read_text() == text
