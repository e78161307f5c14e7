"""The span tree of a scripted Game of 24 search and of a guarded step with retries."""

from __future__ import annotations

import json
import re

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from span_tree import SpanTree

from guardsearch import GuardResult, ModelRequest, ScriptedModel, Step, Trace, otel, run_step
from guardsearch.apps.game24 import Game24Space, parse_numbers
from guardsearch.core.context import Context
from guardsearch.core.errors import StepFailed
from guardsearch.search import search

NUMS = parse_numbers("4 5 6 10")
# What the scripted proposer answers, by the numbers left: one wrong final step (n4)
# beside the right one, so a verdict fails with feedback.
WINNING = {
    "4 5 6 10": ["5 * 6", "4 + 5"],
    "6 9 10": ["6 + 9"],
    "10 15": ["10 + 15", "15 - 10"],
    "4 10 30": ["30 - 10"],
    "4 20": ["20 - 4", "4 + 20"],
}


def proposer() -> ScriptedModel:
    def answer(request: ModelRequest) -> str:
        match = re.search(r"Input: ([^\n]*)", request.messages[-1].content)
        assert match
        return json.dumps({"steps": WINNING.get(" ".join(match.group(1).split()), ["4 + 5"])})

    return ScriptedModel(answer)


async def test_a_game24_search_is_one_run_span_over_expansions_calls_and_verdicts(
    exporter: InMemorySpanExporter,
) -> None:
    trace = Trace()
    result = await search(
        Game24Space(numbers=NUMS), "astar", model=proposer(), budget=30, trace=trace
    )
    assert result.succeeded
    tree = SpanTree(exporter.get_finished_spans())

    (run,) = tree.roots()
    assert run.name == "invoke_workflow search"
    attrs = run.attributes
    assert attrs["gen_ai.operation.name"] == "invoke_workflow"
    assert attrs["guardsearch.run.id"] == result.run_id
    assert attrs["guardsearch.strategy"] == "astar"
    assert attrs["guardsearch.stop_reason"] == "success"
    assert attrs["guardsearch.budget"] == result.trace.events[0].data["budget"]
    # Token counts equal the run's usage, on the run span and summed over the calls.
    calls = tree.named("chat ")
    assert len(calls) == result.usage.calls == len(trace.of_kind("model_call"))
    assert attrs["gen_ai.usage.input_tokens"] == result.usage.prompt_tokens
    assert attrs["gen_ai.usage.output_tokens"] == result.usage.completion_tokens
    assert sum(c.attributes["gen_ai.usage.input_tokens"] for c in calls) == (
        result.usage.prompt_tokens
    )
    assert sum(c.attributes["gen_ai.usage.output_tokens"] for c in calls) == (
        result.usage.completion_tokens
    )

    # run -> expansion -> model call and verdicts; one expansion span per expansion.
    expansions = tree.children(run)
    assert [s.name.split()[0] for s in expansions] == ["expansion"] * result.expansions
    for expansion in expansions:
        kids = tree.children(expansion)
        assert kids[0].name == "chat scripted"
        assert all(k.name.startswith("guard ") for k in kids[1:])

    # The GenAI attributes of a model call.
    call = calls[0]
    assert call.kind is SpanKind.CLIENT
    assert call.attributes["gen_ai.operation.name"] == "chat"
    assert call.attributes["gen_ai.provider.name"] == "scripted"
    assert call.attributes["gen_ai.system"] == "scripted"
    assert call.attributes["gen_ai.request.model"] == "scripted"
    assert call.attributes["gen_ai.request.temperature"] == 0.0
    assert call.attributes["gen_ai.request.max_tokens"] > 0
    assert call.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert call.attributes["gen_ai.output.type"] == "json"
    reserve = trace.of_kind("budget_reserve")[0].data
    assert call.attributes["guardsearch.budget.reserved_prompt_tokens"] == reserve["prompt_tokens"]
    assert (
        call.attributes["guardsearch.budget.granted_completion_tokens"]
        == (reserve["completion_tokens"])
    )
    # No prompt or completion text unless the user opts in.
    assert "gen_ai.input.messages" not in call.attributes

    # One verdict span per guard verdict, carrying the node and its parent: the tree
    # the search built can be rebuilt from the spans.
    verdicts = tree.named("guard ")
    assert len(verdicts) == len(trace.of_kind("guard_verdict")) == len(result.tree) - 1
    rebuilt = {
        v.attributes["guardsearch.node.id"]: v.attributes["guardsearch.node.parent_id"]
        for v in verdicts
    }
    assert rebuilt == {n.id: n.parent for n in result.tree if n.parent is not None}
    for verdict in verdicts:
        owner = tree.parent(verdict)
        assert (
            owner.attributes["guardsearch.node.id"]
            == verdict.attributes["guardsearch.node.parent_id"]
        )
    failed = [v for v in verdicts if not v.attributes["guardsearch.guard.passed"]]
    assert failed, "the scripted search has a wrong final step"
    feedback = failed[0].events[0]
    assert feedback.name == "feedback"
    assert (
        feedback.attributes["guardsearch.guard.feedback"]
        == result.tree[failed[0].attributes["guardsearch.node.id"]].verdict.feedback
    )
    # Every span ends inside its parent.
    for span in tree.spans:
        parent = tree.parent(span)
        if parent is not None:
            assert parent.start_time <= span.start_time <= span.end_time <= parent.end_time


async def test_the_run_span_records_its_ids_in_the_trace(exporter: InMemorySpanExporter) -> None:
    trace = Trace()
    await search(Game24Space(numbers=NUMS), "astar", model=proposer(), budget=30, trace=trace)
    (run,) = SpanTree(exporter.get_finished_spans()).roots()
    notes = [e for e in trace.of_kind("note") if "span" in e.data]
    assert len(notes) == 1 and notes[0].seq == 1  # right after run_start, in order
    assert notes[0].data["span"] == {
        "trace_id": f"{run.context.trace_id:032x}",
        "span_id": f"{run.context.span_id:016x}",
    }
    assert [e.seq for e in trace.events] == list(range(len(trace)))


async def test_a_step_is_a_span_with_one_attempt_span_per_try(
    exporter: InMemorySpanExporter,
) -> None:
    model = ScriptedModel(["3", "4"])

    def even(value: str) -> GuardResult:
        ok = int(value) % 2 == 0
        return GuardResult.ok("even") if ok else GuardResult.fail("must be even", "even")

    step = Step(name="pick", prompt="Pick a number.", guard=even, rmax=3)
    outcome = await run_step(step, Context(objective="an even number"), model)
    assert outcome.attempts == 2
    tree = SpanTree(exporter.get_finished_spans())
    assert tree.outline() == [
        "step pick",
        "  attempt pick",
        "    chat scripted",
        "    guard even",
        "  attempt pick",
        "    chat scripted",
        "    guard even",
    ]
    (step_span,) = tree.roots()
    assert step_span.attributes["guardsearch.step.passed"] is True
    assert step_span.attributes["guardsearch.step.attempts"] == 2
    first, second = tree.children(step_span)
    assert (first.attributes["guardsearch.attempt"], second.attributes["guardsearch.attempt"]) == (
        1,
        2,
    )
    assert [e.name for e in step_span.events] == ["retry"]
    rejected = tree.children(first, "guard")[0]
    assert rejected.attributes["guardsearch.guard.passed"] is False
    assert rejected.events[0].attributes["guardsearch.guard.feedback"] == "must be even"
    # The retry ran warmer: the schedule's temperature is on the second call.
    temps = [c.attributes["gen_ai.request.temperature"] for c in tree.named("chat")]
    assert temps[0] == 0.0 and temps[1] > 0.0


async def test_a_step_whose_guards_reject_every_attempt_ends_in_error(
    exporter: InMemorySpanExporter,
) -> None:
    step = Step(name="pick", prompt="Pick.", guard=lambda v: GuardResult.fail("no", "nay"))
    model = ScriptedModel(lambda r: f"x{r.seed}")
    with pytest.raises(StepFailed):
        await run_step(step, Context(objective="o"), model)
    (step_span,) = SpanTree(exporter.get_finished_spans()).roots()
    assert step_span.status.status_code is StatusCode.ERROR
    assert step_span.attributes["guardsearch.step.attempts"] == 3


@pytest.mark.in_process_only  # it turns tracing on again, with its own provider
async def test_content_is_on_the_spans_only_when_the_user_opts_in(
    exporter: InMemorySpanExporter,
) -> None:
    step = Step(name="say", prompt="Say hi.")
    assert not Trace().record_content
    await run_step(step, Context(objective="greet"), ScriptedModel(["hi there"]))
    (call,) = SpanTree(exporter.get_finished_spans()).named("chat")
    assert "gen_ai.input.messages" not in call.attributes
    exporter.clear()

    otel.disable()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel.enable(provider=provider, capture_content=True)
    assert Trace().record_content
    await run_step(step, Context(objective="greet"), ScriptedModel(["hi there"]))
    (call,) = SpanTree(exporter.get_finished_spans()).named("chat")
    messages = json.loads(call.attributes["gen_ai.input.messages"])
    assert messages[-1]["role"] == "user" and "Say hi." in messages[-1]["parts"][0]["content"]
    output = json.loads(call.attributes["gen_ai.output.messages"])
    text = {"type": "text", "content": "hi there"}
    assert output == [{"role": "assistant", "parts": [text], "finish_reason": "stop"}]


async def test_concurrent_expansions_keep_every_call_and_verdict_under_its_own_node(
    exporter: InMemorySpanExporter,
) -> None:
    result = await search(
        Game24Space(numbers=NUMS, constrained=False),
        "beam",
        model=proposer(),
        budget=12,
        width=2,
        samples=2,
        concurrency=4,
    )
    tree = SpanTree(exporter.get_finished_spans())
    (run,) = tree.roots()
    calls = tree.named("chat ")
    assert len(calls) == result.usage.calls
    for call in calls:  # a call hangs under the expansion of its node, or the run
        owner = tree.parent(call)
        assert (
            owner is run
            or owner.attributes["guardsearch.node.id"] == call.attributes["guardsearch.node.id"]
        )
    for verdict in tree.named("guard "):
        owner = tree.parent(verdict)
        assert owner.name.startswith("expansion ")
        assert (
            owner.attributes["guardsearch.node.id"]
            == verdict.attributes["guardsearch.node.parent_id"]
        )


async def test_a_search_stopped_by_its_budget_ends_every_span(
    exporter: InMemorySpanExporter,
) -> None:
    model = ScriptedModel([json.dumps({"steps": ["4 + 5"]})], repeat_last=True)
    result = await search(Game24Space(numbers=NUMS), "astar", model=model, budget=2)
    assert result.stop_reason == "budget_exhausted"
    tree = SpanTree(exporter.get_finished_spans())
    (run,) = tree.roots()
    assert run.attributes["guardsearch.stop_reason"] == "budget_exhausted"
    assert [e.name for e in run.events].count("budget_exceeded") >= 1
    assert all(s.end_time is not None for s in tree.spans)


async def test_a_failed_model_call_is_an_error_span_and_ends_its_step(
    exporter: InMemorySpanExporter,
) -> None:
    step = Step(name="ask", prompt="Say something.")
    with pytest.raises(Exception, match="server went away"):
        await run_step(
            step, Context(objective="o"), ScriptedModel([RuntimeError("server went away")])
        )
    tree = SpanTree(exporter.get_finished_spans())
    (step_span,) = tree.roots()
    assert step_span.status.status_code is StatusCode.ERROR
    (attempt,) = tree.children(step_span)
    (call,) = tree.children(attempt)
    assert call.status.status_code is StatusCode.ERROR
    assert call.attributes["error.type"] == "RuntimeError"


async def test_a_search_that_raises_ends_its_run_span_as_an_error(
    exporter: InMemorySpanExporter,
) -> None:
    model = ScriptedModel([RuntimeError("boom")])
    with pytest.raises(Exception, match="boom"):
        await search(Game24Space(numbers=NUMS), "astar", model=model, budget=5)
    (run,) = SpanTree(exporter.get_finished_spans()).roots()
    assert run.status.status_code is StatusCode.ERROR
    assert run.attributes["error.type"] == "ModelError"
    assert run.attributes["guardsearch.stop_reason"] == "error"
