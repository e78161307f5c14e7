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


def start(
    provider: Any, capture_content: bool, in_process: bool = True, marker: str = ""
) -> tuple[Any, Any, Callable[[], None]]:
    """The tracer, its provider, and the undo of the hook that gives every new Trace
    a `SpanView` (whose open spans end when the Trace is dropped or the process exits).
    With no provider (given or global) and not `in_process`: an export process, whose
    environment has `marker` set (otel/forward.py)."""
    if provider is None:
        provider = _global_provider()
    if provider is None and not in_process:
        return _start_forwarding(capture_content, marker=marker)
    if provider is None:
        provider = default_provider()
    tracer = provider.get_tracer(SCOPE, _version())
    recorder = Recorder(tracer, InstrumentationScope(SCOPE, _version()))
    stop = _watch(lambda trace: SpanView(recorder, trace), capture_content)
    return tracer, provider, stop


def _start_forwarding(
    capture_content: bool, channel: Any = None, make_global: bool = True, marker: str = ""
) -> tuple[Any, Any, Callable[[], None]]:
    """Spans made in an export process (otel/forward.py): this process's provider (the
    global one, for other instrumentation) forwards its own spans there, and every new
    Trace gets a `Forwarder`. (Tests pass a `Channel(spawn=False)`, not global.)"""
    from guardsearch.otel.forward import Channel, Forwarder, ForwardProcessor

    channel = channel if channel is not None else Channel(marker=marker)
    provider = TracerProvider(resource=_resource())
    provider.add_span_processor(ForwardProcessor(channel))
    provider.guardsearch_channel = channel  # type: ignore[attr-defined]
    if make_global:
        trace_api.set_tracer_provider(provider)
    tracer = provider.get_tracer(SCOPE, _version())
    stop = _watch(lambda trace: Forwarder(channel, tracer, trace), capture_content)
    return tracer, provider, stop


def _watch(make: Callable[[Trace], Any], capture_content: bool) -> Callable[[], None]:
    """Subscribe `make(trace)` to every new Trace; its `close_all(why)` ends the spans
    still open when the Trace is dropped or the process exits. Returns the undo."""
    subscribers: weakref.WeakSet[Any] = weakref.WeakSet()

    def attach(trace: Trace) -> None:
        subscriber = make(trace)
        trace.record_content = capture_content
        trace.subscribe(getattr(subscriber, "receive", subscriber))
        subscribers.add(subscriber)
        # A run that never emitted its end (a crash, a pause) still ends its spans.
        weakref.finalize(trace, subscriber.close_all, "trace dropped").atexit = False

    def at_exit() -> None:
        for subscriber in list(subscribers):
            subscriber.close_all("process exit")

    unwatch = watch_traces(attach)
    atexit.register(at_exit)  # after the provider's own: runs before it shuts down

    def stop() -> None:
        unwatch()
        atexit.unregister(at_exit)
        at_exit()

    return stop


def _version() -> str | None:
    try:
        return metadata.version("guardsearch")
    except metadata.PackageNotFoundError:
        return None


def _global_provider() -> Any:
    """The SDK provider the application set up itself, if it did."""
    current = trace_api.get_tracer_provider()
    return current if isinstance(current, TracerProvider) else None


def _resource() -> Resource:
    return Resource.create({SERVICE_NAME: os.environ.get("OTEL_SERVICE_NAME") or SCOPE})


def default_provider() -> Any:
    """The provider the application set up, else one that exports over OTLP/HTTP to the
    endpoint in the environment from this process (made the global one, so other
    instrumentation joins)."""
    current = _global_provider()
    if current is not None:
        return current
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    provider = TracerProvider(resource=_resource())
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace_api.set_tracer_provider(provider)
    return provider
