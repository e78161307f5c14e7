"""Requests that start runs as spans that continue the caller's trace (W3C `traceparent`).

With tracing on (docs/observability.md), a POST to /run, /run-simple, /solve or
/search becomes a SERVER span whose parent is the span the caller's `traceparent`
header names, and the run it starts hangs under it, so the caller's trace contains
the run it asked for (the run span carries the run id; so does this one). Where an
instrumentation outside made the request's span already (FastAPI's own, with a global
tracer provider), the run hangs under that one. With tracing off a request passes
straight through, and this module imports nothing of opentelemetry.
"""

from __future__ import annotations

from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from guardsearch import otel

TRACED_PATHS = frozenset({"/run", "/run-simple", "/solve", "/search"})


class TraceRequests:
    """ASGI middleware: a span per run-starting request, in the caller's trace."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        tracer = otel.tracer()
        if (
            tracer is None
            or scope["type"] != "http"
            or scope.get("method") != "POST"
            or scope.get("path") not in TRACED_PATHS
        ):
            await self.app(scope, receive, send)
            return
        await _traced(self.app, tracer, scope, receive, send)


async def _traced(app: ASGIApp, tracer: Any, scope: Scope, receive: Receive, send: Send) -> None:
    from opentelemetry import propagate, trace
    from opentelemetry.trace import SpanKind, Status, StatusCode

    if trace.get_current_span().is_recording():
        # An instrumentation outside (FastAPI's own, where the process has a global
        # tracer provider) made the request's span in the caller's trace already.
        await app(scope, receive, send)
        return
    headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}
    parent = propagate.extract(headers)
    path = scope["path"]
    attributes = {"http.request.method": "POST", "url.path": path, "http.route": path}
    with tracer.start_as_current_span(
        f"POST {path}", context=parent, kind=SpanKind.SERVER, attributes=attributes
    ) as span:

        async def send_traced(message: Message) -> None:
            if message["type"] == "http.response.start":
                status = int(message["status"])
                span.set_attribute("http.response.status_code", status)
                if status >= 500:
                    span.set_status(Status(StatusCode.ERROR))
            await send(message)

        await app(scope, receive, send_traced)
