"""A resumed durable run's spans link to the run span of the session it resumes."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from span_tree import SpanTree
from test_spans_search import proposer

from guardsearch.runs import RunSpec, create_run, execute_run
from guardsearch.store.sqlite import SqliteRunStore


async def test_a_resumed_run_links_to_the_sessions_before_it(
    tmp_path: Path, exporter: InMemorySpanExporter
) -> None:
    store = SqliteRunStore(tmp_path / "runs.sqlite3")
    try:
        spec = RunSpec(
            app="game24", problem={"numbers": "4 5 6 10"}, strategy="astar", budget={"calls": 1}
        )
        run = create_run(spec, store).id
        first = await execute_run(run, store, model=proposer())
        assert (first.status, first.termination) == ("failed", "budget_exhausted")
        second = await execute_run(run, store, model=proposer(), budget={"calls": 30})
        assert second.status == "succeeded"
        stored = [e["data"]["span"] for e in store.events(run) if "span" in e["data"]]
    finally:
        store.close()

    sessions = SpanTree(exporter.get_finished_spans()).named("invoke_workflow search")
    assert len(sessions) == 2
    before, after = sessions
    assert before.attributes["guardsearch.run.id"] == after.attributes["guardsearch.run.id"] == run
    assert after.attributes["guardsearch.resumed"] is True
    assert before.links == ()
    (link,) = after.links
    assert (link.context.trace_id, link.context.span_id) == (
        before.context.trace_id,
        before.context.span_id,
    )
    # The store keeps each session's run span ids among the run's events.
    assert stored == [
        {"trace_id": f"{s.context.trace_id:032x}", "span_id": f"{s.context.span_id:016x}"}
        for s in sessions
    ]
