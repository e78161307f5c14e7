"""A span still open when its trace is dropped, or when tracing stops, still ends."""

from __future__ import annotations

import gc

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from guardsearch import Trace, otel


def test_a_span_left_open_ends_as_an_error_when_its_trace_is_dropped(
    exporter: InMemorySpanExporter,
) -> None:
    trace = Trace()
    trace.emit("run_start", run_id="r1", strategy="dfs")
    trace.emit("step_start", step="ask", rmax=2)  # then the process lost the run
    assert exporter.get_finished_spans() == ()
    del trace
    gc.collect()
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert set(spans) == {"invoke_workflow search", "step ask", "attempt ask"}
    run = spans["invoke_workflow search"]
    assert run.status.status_code is StatusCode.ERROR
    assert run.status.description == "trace dropped"
    assert spans["step ask"].status.status_code is StatusCode.ERROR


def test_turning_tracing_off_ends_the_spans_still_open(exporter: InMemorySpanExporter) -> None:
    trace = Trace()
    trace.emit("phase", step="review", phase="plan", run_id="r2", t=0.0)
    otel.disable()
    names = sorted(s.name for s in exporter.get_finished_spans())
    assert names == ["invoke_workflow review", "phase plan"]
    trace.emit("run_end", step="review", run_id="r2", t=0.1)  # no view: no span
    assert len(exporter.get_finished_spans()) == 2
    assert otel.enable_from_env() is False  # and the environment asks for nothing


@pytest.mark.in_process_only  # a failing forwarder: test_forward.py
def test_a_failing_span_view_warns_and_the_run_goes_on(
    exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    from guardsearch.otel import genai

    def broken(*args: object) -> dict[str, object]:
        raise KeyError("oops")

    monkeypatch.setattr(genai, "verdict", broken)
    trace = Trace()
    with pytest.warns(RuntimeWarning, match="span view failed on a guard_verdict event"):
        trace.emit("guard_verdict", step="s", node="n1", guard="g", passed=True)
    trace.emit("guard_verdict", step="s", node="n2", guard="g", passed=True)  # no more
    assert len(trace) == 2


def test_a_run_the_sampler_leaves_out_exports_no_span() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

    memory = InMemorySpanExporter()
    provider = TracerProvider(sampler=ALWAYS_OFF)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    otel.enable(provider=provider)
    try:
        notes = short_run().of_kind("note")
    finally:
        otel.disable()
    assert memory.get_finished_spans() == ()
    assert notes[0].data["span"]["trace_id"] != "0" * 32  # still recorded: ids exist


def short_run() -> Trace:
    """A run of one step, as its events."""
    trace = Trace()
    trace.emit("run_start", run_id="r3", strategy="dfs")
    trace.emit("step_start", step="ask", rmax=1)
    trace.emit("step_end", step="ask", passed=True, attempts=1)
    trace.emit("run_end", termination="success")
    return trace
