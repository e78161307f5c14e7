"""The export process path (otel/forward.py, export_process.py): what only it does.

The span trees themselves are checked both ways by the other tests (conftest.py runs
each `exporter` test in the test's process and replayed as the export process would)."""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
import time
import weakref
from pathlib import Path

import pytest
from opentelemetry import trace as trace_api
from otlp_receiver import otlp_receiver
from span_tree import SpanTree
from test_otlp_export import _env, run_python
from test_span_ends import short_run

from conftest import Replayed
from guardsearch import Step, Trace, otel, run_step
from guardsearch.core.context import Context
from guardsearch.models.scripted import ScriptedModel
from guardsearch.otel import setup
from guardsearch.otel.forward import Channel


def _forwarding(capture_content: bool = False) -> Replayed:
    channel = Channel(spawn=False)
    replayed = Replayed(channel)
    tracer, provider, stop = setup._start_forwarding(capture_content, channel, make_global=False)
    otel._tracing = otel._Tracing(tracer, provider, capture_content, stop)
    return replayed


async def test_content_reaches_the_export_process_when_the_user_opts_in() -> None:
    replayed = _forwarding(capture_content=True)
    try:
        step = Step(name="say", prompt="Say hi.")
        await run_step(step, Context(objective="greet"), ScriptedModel(["hi there"]))
        (call,) = SpanTree(replayed.get_finished_spans()).named("chat")
    finally:
        otel.disable()
    messages = json.loads(call.attributes["gen_ai.input.messages"])
    assert "Say hi." in messages[-1]["parts"][0]["content"]
    assert json.loads(call.attributes["gen_ai.output.messages"])[0]["parts"][0]["content"] == (
        "hi there"
    )


def test_values_marshal_cannot_send_arrive_as_text() -> None:
    replayed = _forwarding()
    try:
        trace = Trace()
        trace.emit("run_start", run_id="r1", strategy="dfs", where=Path("/tmp/x"))
        trace.emit("run_end", termination="success")
        (run,) = SpanTree(replayed.get_finished_spans()).roots()
    finally:
        otel.disable()
    assert run.attributes["guardsearch.where"] == "/tmp/x"
    assert run.attributes["guardsearch.stop_reason"] == "success"


def test_a_run_the_sampler_leaves_out_is_not_exported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "always_off")
    replayed = _forwarding()
    try:
        trace = short_run()
        assert replayed.get_finished_spans() == ()
    finally:
        otel.disable()
    (note,) = trace.of_kind("note")
    assert note.data["span"]["trace_id"] != "0" * 32  # still recorded: ids exist


def test_a_request_span_made_here_is_exported_there() -> None:
    replayed = _forwarding()
    try:
        tracer = otel.tracer()
        with tracer.start_as_current_span("outer") as outer:
            trace = Trace()
            trace.emit("run_start", run_id="r4", strategy="dfs")
            trace.emit("run_end", termination="success")
        tree = SpanTree(replayed.get_finished_spans())
    finally:
        otel.disable()
    (root,) = tree.roots()
    assert root.name == "outer"
    assert root.attributes["guardsearch.run.id"] == "r4"
    (run,) = tree.named("invoke_workflow search")
    assert tree.parent(run) is root
    assert run.context.trace_id == outer.get_span_context().trace_id
    assert trace_api.get_current_span() is trace_api.INVALID_SPAN


SEARCH = """
import asyncio, json, sys
sys.path.insert(0, sys.argv[1])
import overhead
from guardsearch import otel
from guardsearch.models.scripted import ScriptedModel
from guardsearch.search import search
result = asyncio.run(search(overhead.WideSpace(), "bfs", model=ScriptedModel(overhead._propose),
                            max_expansions=300))
print(json.dumps({"nodes": len(result.tree), "stats": otel.export_stats()}))
"""


def test_the_export_process_sends_every_span_and_says_how_many(tmp_path: Path) -> None:
    benchmarks = str(Path(__file__).parents[3] / "benchmarks")
    with otlp_receiver() as (url, received):
        out = json.loads(
            run_python(["-c", SEARCH, benchmarks], _env(OTEL_EXPORTER_OTLP_ENDPOINT=url))
        )
        spans = received.spans()
    stats = out["stats"]
    assert stats["dropped"] == 0 and stats["cpu_s"] > 0
    # 300 expansions: each its span, its call and one verdict per child; and the run.
    assert stats["spans"] == len(spans) == 1 + 300 * 2 + (out["nodes"] - 1)
    assert {s["scope"] for s in spans} == {"guardsearch"}


def test_a_finished_run_s_task_and_result_are_freed_without_the_garbage_collector() -> None:
    """The forwarder's mark of a task must not keep the task (and its result: a whole
    search tree and trace) alive in a cycle until the collector's next full pass."""

    class Result:
        pass

    async def main() -> tuple[weakref.ref[Result], Result]:
        trace = Trace()
        trace.emit("note", message="in a task")
        result = Result()
        return weakref.ref(result), result

    _forwarding()
    gc.disable()
    try:
        ref, result = asyncio.run(main())
        del result
        assert ref() is None
    finally:
        gc.enable()
        otel.disable()


EXIT_AFTER_SEARCH = """
import asyncio, json, os, sys
sys.path.insert(0, sys.argv[1])
import overhead
from guardsearch import otel
from guardsearch.models.scripted import ScriptedModel
from guardsearch.search import search
result = asyncio.run(search(overhead.WideSpace(), "bfs", model=ScriptedModel(overhead._propose),
                            max_expansions=300))
channel = otel._tracing.provider.guardsearch_channel
print(json.dumps({"nodes": len(result.tree), "exporter": channel.process.pid}), flush=True)
"""


def test_a_detached_export_process_sends_every_span_after_the_run_exited(
    tmp_path: Path,
) -> None:
    """GUARDSEARCH_OTEL_DETACH: the run's process exits without waiting for the export
    (a slow collector here: a second a request), and no span is lost."""
    benchmarks = str(Path(__file__).parents[3] / "benchmarks")
    env = _env(GUARDSEARCH_OTEL_DETACH="1")
    with otlp_receiver(delay_s=1.0) as (url, received), open(tmp_path / "err", "w") as err:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = url
        done = subprocess.run(
            [sys.executable, "-c", EXIT_AFTER_SEARCH, benchmarks],
            env=env,
            stdout=subprocess.PIPE,
            stderr=err,  # the export process keeps it open: no pipe a reader waits on
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, (tmp_path / "err").read_text()
        out = json.loads(done.stdout)
        expected = 1 + 300 * 2 + (out["nodes"] - 1)  # as in the test above
        at_exit = len(received.spans())
        deadline = time.monotonic() + 30
        while len(received.spans()) < expected and time.monotonic() < deadline:
            time.sleep(0.1)
        spans = received.spans()
    assert at_exit < expected  # the run did not wait for the export
    assert len(spans) == expected and len({s["span_id"] for s in spans}) == expected
    assert not any(s["status"] == 2 for s in spans)  # every span ended as the run ended it
    deadline = time.monotonic() + 5
    while _alive(out["exporter"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(out["exporter"])  # and then the export process was done
    assert (tmp_path / "err").read_text() == ""


def _alive(pid: int) -> bool:
    """Is `pid` running (a zombie nobody reaped yet is not)?"""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except FileNotFoundError:
        return False


QUIET = """
import sys, time
from guardsearch import Trace
trace = Trace()
trace.emit("run_start", run_id="quiet", strategy="dfs")
trace.emit("run_end", termination="success")
print("emitted", flush=True)
time.sleep(30)  # a quiet process: no more events, no flush, no exit
"""


def test_a_quiet_process_s_spans_still_go_out_within_seconds() -> None:
    with otlp_receiver() as (url, received):
        env = _env(OTEL_EXPORTER_OTLP_ENDPOINT=url, OTEL_BSP_SCHEDULE_DELAY="100")
        process = subprocess.Popen(
            [sys.executable, "-c", QUIET], env=env, stdout=subprocess.PIPE, text=True
        )
        try:
            assert process.stdout is not None and process.stdout.readline() == "emitted\n"
            deadline = time.monotonic() + 15
            while not received.spans() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert process.poll() is None  # still running: the spans went out on their own
        finally:
            process.kill()
            process.communicate()
        (run,) = received.spans()
    assert run["attributes"]["guardsearch.run.id"] == "quiet"


def test_when_the_export_process_dies_the_run_goes_on_and_says_so() -> None:
    channel = Channel(marker=otel.EXPORTER_ENV)
    tracer, provider, stop = setup._start_forwarding(False, channel, make_global=False)
    otel._tracing = otel._Tracing(tracer, provider, False, stop)
    try:
        assert channel.process is not None
        channel.process.kill()
        channel.process.wait()
        trace = Trace()
        with pytest.warns(RuntimeWarning, match="span export process ended"):
            for n in range(2000):  # enough to fill frames
                trace.emit("note", message=f"n{n}")
            channel.send(force=True)
            assert not channel.force_flush(timeout_s=5)
        assert len(trace) == 2000
    finally:
        otel.disable()
        provider.shutdown()
