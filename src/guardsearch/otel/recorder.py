"""Spans made straight from events, for the SDK's span processors.

A span view knows each span's whole life from its events, so it needs none of what a
live `Tracer.start_span` span does on every attribute and every end (validation and
locks for spans that code may still change from anywhere). `Recorder` makes the ids,
asks the provider's sampler once per trace root, keeps a span's attributes and events
in plain containers, and hands the finished `ReadableSpan` to the provider's span
processors, as the SDK's own spans end: exporters and tests cannot tell the difference,
and a span costs about a quarter of the CPU.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import Event as SpanEvent
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from guardsearch.core.errors import ConfigError

_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_NOT_SAMPLED = TraceFlags(TraceFlags.DEFAULT)
_UNSET = Status(StatusCode.UNSET)


class Recorded:
    """A span being recorded: what the view sets on it until it ends."""

    __slots__ = (
        "attributes",
        "context",
        "events",
        "kind",
        "links",
        "name",
        "parent",
        "start",
        "status",
    )

    def __init__(
        self,
        name: str,
        context: SpanContext,
        parent: SpanContext | None,
        kind: SpanKind,
        attributes: dict[str, Any],
        start: int,
        links: Sequence[Link],
    ) -> None:
        self.name = name
        self.context = context
        self.parent = parent
        self.kind = kind
        self.attributes = attributes
        self.start = start
        self.links = links
        self.events: list[SpanEvent] = []
        self.status = _UNSET

    def set_attribute(self, key: str, value: Any) -> None:
        self.attributes[key] = value

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        self.attributes.update(attributes)

    def add_event(self, name: str, attributes: dict[str, Any], timestamp: int) -> None:
        self.events.append(SpanEvent(name, attributes, timestamp))

    def fail(self, description: str) -> None:
        self.status = Status(StatusCode.ERROR, description)


class Recorder:
    """Makes `Recorded` spans under a tracer's provider and ends them into its processors."""

    def __init__(self, tracer: Any, scope: InstrumentationScope) -> None:
        try:
            self.processor = tracer.span_processor
            self.resource = tracer.resource
            self.ids = tracer.id_generator
            self.sampler = tracer.sampler
        except AttributeError:
            raise ConfigError(
                "traces need an OpenTelemetry SDK tracer provider "
                "(opentelemetry.sdk.trace.TracerProvider)"
            ) from None
        self.scope = scope

    def start(
        self,
        name: str,
        parent: SpanContext | None,
        attributes: dict[str, Any],
        start: int,
        *,
        kind: SpanKind = SpanKind.INTERNAL,
        links: Sequence[Link] = (),
    ) -> Recorded:
        """A span under `parent` (None: under the caller's current span, if any, and
        sampled as the provider's sampler decides)."""
        if parent is None:
            outer = trace_api.get_current_span().get_span_context()
            trace_id = outer.trace_id if outer.is_valid else self.ids.generate_trace_id()
            decision = self.sampler.should_sample(
                otel_context.get_current(), trace_id, name, kind, attributes, links
            )
            flags = _SAMPLED if decision.decision.is_sampled() else _NOT_SAMPLED
            parent = outer if outer.is_valid else None
        else:
            trace_id, flags = parent.trace_id, parent.trace_flags
        context = SpanContext(trace_id, self.ids.generate_span_id(), False, flags)
        return Recorded(name, context, parent, kind, attributes, start, links)

    def end(self, span: Recorded, end: int) -> None:
        """Hand the finished span to the processors (a span not sampled is dropped)."""
        if not span.context.trace_flags.sampled:
            return
        self.processor.on_end(
            ReadableSpan(
                name=span.name,
                context=span.context,
                parent=span.parent,
                resource=self.resource,
                attributes=span.attributes,
                events=span.events,
                links=span.links,
                kind=span.kind,
                status=span.status,
                start_time=span.start,
                end_time=end,
                instrumentation_scope=self.scope,
            )
        )
