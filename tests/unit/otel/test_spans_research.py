"""The span tree of a scripted research run: run -> phases -> steps -> attempts -> calls."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from research_script import QUESTION, Painting, research_model
from span_tree import SpanTree

from guardsearch import Trace
from guardsearch.core.budget import Budget
from guardsearch.loops.research import AgentResponse, ResearchConfig, ResearchLoop
from guardsearch.tools import ResilienceSettings


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path / "home"))
    yield


async def test_a_research_run_is_a_run_span_over_phases_steps_and_calls(
    exporter: InMemorySpanExporter,
) -> None:
    loop = ResearchLoop(
        model=research_model(),
        providers=[Painting()],
        # the model's reflection always runs (no evidence stop), so the tree has all
        # three guarded steps
        config=ResearchConfig(evidence_stop=False),
        resilience=ResilienceSettings(timeout_s=1.0),
    )
    trace = Trace()
    run = await loop.run(QUESTION, budget=Budget.of(tokens=40_000), trace=trace)
    assert isinstance(run.response, AgentResponse), run.response
    tree = SpanTree(exporter.get_finished_spans())

    (root,) = tree.roots()
    assert root.name == "invoke_workflow research"
    assert root.attributes["gen_ai.workflow.name"] == "research"
    assert root.attributes["guardsearch.run.id"] == run.run_id
    assert root.attributes["guardsearch.stop_reason"] == run.stop_reason
    assert "tokens" in root.attributes["guardsearch.budget"]

    # One phase span per phase event, in order, all under the run; its run_end ends it.
    phases = [e.data["phase"] for e in trace.of_kind("phase")]
    assert trace.events[-1].kind == "run_end" and "end" not in phases
    assert [s.name for s in tree.children(root)] == [f"phase {p}" for p in phases]

    # Each guarded step sits in its phase, one attempt span per try, its calls inside.
    steps = tree.named("step ")
    names = ("research-plan", "research-synthesize")  # reflect only when it is asked
    assert {s.name for s in steps} >= {f"step {n}" for n in names}
    for step in steps:
        assert tree.parent(step).name.startswith(("phase ", "attempt ", "guard "))
        attempts = tree.children(step)
        assert attempts and all(
            a.name == f"attempt {step.attributes['guardsearch.step']}" for a in attempts
        )
        assert len(attempts) == step.attributes["guardsearch.step.attempts"]
    plan = tree.named("step research-plan")[0]
    assert tree.parent(plan).name == "phase plan"
    (attempt,) = tree.children(plan)
    call, verdict = tree.children(attempt)
    assert call.name == "chat scripted-research"
    assert call.attributes["gen_ai.request.model"] == "scripted-research"
    assert verdict.name.startswith("guard ")

    # Token counts equal the run's usage; one verdict span per guard verdict.
    calls = tree.named("chat ")
    assert len(calls) == run.usage.calls
    assert sum(c.attributes["gen_ai.usage.input_tokens"] for c in calls) == (
        run.usage.prompt_tokens
    )
    assert sum(c.attributes["gen_ai.usage.output_tokens"] for c in calls) == (
        run.usage.completion_tokens
    )
    assert root.attributes["gen_ai.usage.input_tokens"] == run.usage.prompt_tokens
    assert root.attributes["gen_ai.usage.output_tokens"] == run.usage.completion_tokens
    assert len(tree.named("guard ")) == len(trace.of_kind("guard_verdict"))
