"""Turning tracing on: the tracer provider, and a span view on every new Trace.

Imported only by `guardsearch.otel.enable` (it imports opentelemetry).
"""

from __future__ import annotations

import atexit
import os
import weakref
from collections.abc import Callable
from importlib import metadata
from typing import Any

from opentelemetry import trace as trace_api
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from guardsearch.core.events import Trace, watch_traces
from guardsearch.otel.recorder import Recorder
from guardsearch.otel.spans import SpanView

SCOPE = "guardsearch"


def start(provider: Any, capture_content: bool) -> tuple[Any, Any, Callable[[], None]]:
    """The tracer, its provider, and the undo of the hook that gives every new Trace
    a `SpanView` (whose open spans end when the Trace is dropped or the process exits)."""
    if provider is None:
        provider = default_provider()
    tracer = provider.get_tracer(SCOPE, _version())
    recorder = Recorder(tracer, InstrumentationScope(SCOPE, _version()))
    views: weakref.WeakSet[SpanView] = weakref.WeakSet()

    def attach(trace: Trace) -> None:
        view = SpanView(recorder, trace)
        trace.record_content = capture_content
        trace.subscribe(view)
        views.add(view)
        # A run that never emitted its end (a crash, a pause) still ends its spans.
        weakref.finalize(trace, view.close_all, "trace dropped").atexit = False

    def at_exit() -> None:
        for view in list(views):
            view.close_all("process exit")

    unwatch = watch_traces(attach)
    atexit.register(at_exit)  # after the provider's own: runs before it shuts down

    def stop() -> None:
        unwatch()
        atexit.unregister(at_exit)
        at_exit()

    return tracer, provider, stop


def _version() -> str | None:
    try:
        return metadata.version("guardsearch")
    except metadata.PackageNotFoundError:
        return None


def default_provider() -> Any:
    """The provider the application set up, else one that exports over OTLP/HTTP to the
    endpoint in the environment (made the global one, so other instrumentation joins)."""
    current = trace_api.get_tracer_provider()
    if isinstance(current, TracerProvider):
        return current
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    service = os.environ.get("OTEL_SERVICE_NAME") or SCOPE
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace_api.set_tracer_provider(provider)
    return provider
