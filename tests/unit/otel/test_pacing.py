"""When the work of tracing happens (otel/pacing.py, forward.py, export_process.py): the
run's process holds its events until a quiet moment, the export process makes spans
while the run is idle; a flush, a full buffer or the age limit override both."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otlp_receiver import otlp_receiver
from test_otlp_export import _env
from test_span_ends import short_run

from guardsearch import Trace, otel
from guardsearch.otel import forward, pacing, setup
from guardsearch.otel.export_process import Pump, Replay, _Count
from guardsearch.otel.forward import Channel
from guardsearch.otel.wire import FrameReader, frame


def _burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads /proc")
def test_the_watch_tells_a_busy_process_from_an_idle_one() -> None:
    watch = pacing.RunWatch(os.getpid())
    assert watch.busy()  # a fresh look counts as busy until it has measured
    started = time.process_time()
    _burn(pacing.WINDOW_S * 2)
    burned = time.process_time() - started
    # However loaded the machine, the window is as long as the CPU it saw burned.
    watch._then = time.monotonic() - burned
    assert watch.busy()
    time.sleep(pacing.WINDOW_S * 2)
    assert not watch.busy()
    watch.restart()
    assert watch.busy()


def test_without_proc_the_run_always_counts_as_idle() -> None:
    watch = pacing.RunWatch(-1)  # no such process: no /proc/-1/stat
    assert not watch.busy()
    time.sleep(pacing.WINDOW_S)
    assert not watch.busy()


def test_the_limits_come_from_the_sdk_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "250")
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", "100000")
    assert pacing.max_wait_s() == 0.25
    assert pacing.max_backlog_bytes() == 100000 * 8 * 160
    assert forward._max_held() == 800000
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "soon")
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", "many")
    assert pacing.max_wait_s() == 5.0
    assert pacing.max_backlog_bytes() == 4 << 20
    assert forward._max_held() == 2048 * 8


class Watch:
    """A run whose business the test decides."""

    def __init__(self) -> None:
        self.is_busy = True

    def busy(self) -> bool:
        return self.is_busy

    def restart(self) -> None:
        pass


class Pumped:
    """A Pump reading a pipe the test writes frames to, its spans in memory."""

    def __init__(self) -> None:
        self.memory = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.memory))
        count = _Count()  # the spans made, as the ack says
        provider.add_span_processor(count)
        replay = Replay(provider, setup.SCOPE, None)
        self.read_fd, self.write_fd = os.pipe()
        self.watch = Watch()
        self.pump = Pump(replay, provider, count, FrameReader(self.read_fd), self.watch)

    def write(self, records: list[tuple[object, ...]]) -> None:
        os.write(self.write_fd, frame(records))
        self.pump.step(wait_s=1.0)  # reads it (and replays it only if it is due)

    def spans(self) -> int:
        self.pump.step(wait_s=0.0)
        return len(self.memory.get_finished_spans())


@pytest.fixture
def pumped() -> Iterator[Pumped]:
    pumped = Pumped()
    yield pumped
    os.close(pumped.write_fd)
    os.close(pumped.read_fd)


RUN = [
    ("t", 1, 0),
    (1, 1, 0, "run_start", time.time(), "", "", {"run_id": "r", "strategy": "dfs"}),
    (1, 1, 1, "run_end", time.time(), "", "", {"termination": "success"}),
]


def test_the_export_process_waits_while_the_run_is_busy(pumped: Pumped) -> None:
    pumped.write(RUN)
    assert pumped.spans() == 0 and pumped.spans() == 0
    pumped.watch.is_busy = False
    assert pumped.spans() == 1


def test_a_flush_is_answered_however_busy_the_run(
    pumped: Pumped, capsys: pytest.CaptureFixture[str]
) -> None:
    pumped.write([*RUN, ("f", 7)])
    assert pumped.spans() == 1
    assert capsys.readouterr().out.startswith("ack 7 1 ")


def test_events_that_waited_long_enough_are_replayed(pumped: Pumped) -> None:
    pumped.pump.max_wait = 0.0
    pumped.write(RUN)
    assert pumped.spans() == 1


def test_a_backlog_too_large_is_replayed(pumped: Pumped) -> None:
    pumped.pump.max_bytes = 1
    pumped.write(RUN)
    assert pumped.spans() == 1


def test_the_end_of_the_input_replays_everything(pumped: Pumped) -> None:
    pumped.write(RUN)
    os.close(pumped.write_fd)
    pumped.write_fd = os.open(os.devnull, os.O_WRONLY)  # for the fixture to close
    pumped.pump.run()
    assert len(pumped.memory.get_finished_spans()) == 1


def _forwarding(channel: Channel) -> None:
    tracer, provider, stop = setup._start_forwarding(False, channel, make_global=False)
    otel._tracing = otel._Tracing(tracer, provider, False, stop)


def test_the_run_s_process_holds_its_events_until_it_must_send() -> None:
    channel = Channel(spawn=False)
    _forwarding(channel)
    try:
        short_run()
        assert channel.take_frames() == []  # held: no encoding while the run runs
        channel.send(force=True)  # a flush, the exit, or the ticker at a quiet moment
        assert len(channel.take_frames()) == 1
    finally:
        otel.disable()


def test_a_full_hold_is_sent_at_once_in_frames_the_export_process_paces_by(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", "128")  # 1,024 records held at most
    channel = Channel(spawn=False)
    _forwarding(channel)
    try:
        trace = Trace()
        for n in range(1023):
            trace.emit("note", message=f"n{n}")
        assert channel.take_frames() == []  # 1,023 events and the context's record
        trace.emit("note", message="one more")
        assert len(channel.take_frames()) == 1024 // forward.BATCH
    finally:
        otel.disable()


CRASH = """
import os, sys, time
from guardsearch import Trace
trace = Trace()
trace.emit("run_start", run_id="crashed", strategy="dfs")
trace.emit("step_start", step="ask", rmax=1)
time.sleep(float(sys.argv[1]))  # quiet: the ticker hands the events over
trace.emit("step_end", step="ask", passed=True, attempts=1)  # held when it dies
os._exit(3)  # a crash: no atexit, no flush
"""


def test_a_crash_loses_only_the_events_still_held() -> None:
    with otlp_receiver() as (url, received):
        env = _env(OTEL_EXPORTER_OTLP_ENDPOINT=url, OTEL_BSP_SCHEDULE_DELAY="100")
        command = [sys.executable, "-c", CRASH, str(3 * forward.TICK_S)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 3, done.stderr
        deadline = time.monotonic() + 15
        while len(received.spans()) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        spans = received.spans()
    # The run and the step were handed over before the crash, and end as unfinished
    # when the export process's input ends; the step's end was still held.
    names = sorted(s["name"] for s in spans)
    assert names == ["attempt ask", "invoke_workflow search", "step ask"], names
    assert all(s["status"] == 2 for s in spans), spans  # errors: "process exit"
