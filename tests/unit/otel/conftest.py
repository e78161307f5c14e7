"""Tracing on, into the OpenTelemetry SDK's in-memory exporter, for one test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

from guardsearch import otel


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    """Every span of the runs the test makes, finished ones in `get_finished_spans()`."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    otel.enable(provider=provider, capture_content=False)
    try:
        yield memory
    finally:
        otel.disable()
        provider.shutdown()
