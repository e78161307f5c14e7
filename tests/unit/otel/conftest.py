"""Tracing on, into the OpenTelemetry SDK's in-memory exporter, for one test.

Each test that takes `exporter` runs twice: with the spans made in the test's process
(`in_process`: the SpanView subscribed to the trace), and as the span export process
makes them (`export_process`: the test's process forwards its events, otel/forward.py,
and the records it would send are replayed here by otel/export_process.py's `Replay`),
unless it is marked `in_process_only`.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from guardsearch import otel
from guardsearch.otel import setup
from guardsearch.otel.export_process import Replay
from guardsearch.otel.forward import Channel
from guardsearch.otel.wire import frames


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "in_process_only: the test needs the spans made in its own process"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "exporter" in metafunc.fixturenames:
        only = metafunc.definition.get_closest_marker("in_process_only")
        modes = ["in_process"] if only else ["in_process", "export_process"]
        metafunc.parametrize("exporter", modes, indirect=True)


class Replayed:
    """An in-memory exporter's view of the spans the export process would make."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.memory = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.memory))
        self.replay = Replay(provider, setup.SCOPE, setup._version())

    def get_finished_spans(self) -> tuple[ReadableSpan, ...]:
        self.channel.send(force=True)
        for data in self.channel.take_frames():
            for records in frames(io.BytesIO(data)):
                for record in records:
                    self.replay.handle(record)
        return self.memory.get_finished_spans()

    def clear(self) -> None:
        self.get_finished_spans()
        self.memory.clear()


@pytest.fixture
def exporter(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Every span of the runs the test makes, finished ones in `get_finished_spans()`."""
    if getattr(request, "param", "in_process") == "export_process":
        channel = Channel(spawn=False)
        replayed = Replayed(channel)
        tracer, provider, stop = setup._start_forwarding(False, channel, make_global=False)
        otel._tracing = otel._Tracing(tracer, provider, False, stop)
        try:
            yield replayed
        finally:
            otel.disable()
            provider.shutdown()
        return
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    otel.enable(provider=provider, capture_content=False)
    try:
        yield memory
    finally:
        otel.disable()
        provider.shutdown()
