"""A small OTLP/HTTP trace receiver on 127.0.0.1 (tests): what a collector would get.

It accepts `POST /v1/traces` with a protobuf `ExportTraceServiceRequest` (gzip or
not), answers with an empty `ExportTraceServiceResponse`, and keeps every span.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


class Received:
    """The spans a receiver got, flattened: name, ids, parent, attributes, resource."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.lock = threading.Lock()

    def spans(self) -> list[dict[str, Any]]:
        out = []
        with self.lock:
            requests = list(self.requests)
        for request in requests:
            for resource_spans in request.resource_spans:
                resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        out.append(
                            {
                                "name": span.name,
                                "trace_id": span.trace_id.hex(),
                                "span_id": span.span_id.hex(),
                                "parent_id": span.parent_span_id.hex(),
                                "attributes": {a.key: _value(a.value) for a in span.attributes},
                                "events": [e.name for e in span.events],
                                "links": [
                                    (lk.trace_id.hex(), lk.span_id.hex()) for lk in span.links
                                ],
                                "scope": scope_spans.scope.name,
                                "resource": resource,
                                "status": span.status.code,  # 0 unset, 1 ok, 2 error
                            }
                        )
        return out


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


@contextmanager
def otlp_receiver(delay_s: float = 0.0) -> Iterator[tuple[str, Received]]:
    """(base URL for OTEL_EXPORTER_OTLP_ENDPOINT, what was received) while it runs;
    `delay_s`: each request is kept that long before it counts (a slow collector)."""
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path != "/v1/traces":
                self.send_error(404)
                return
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            time.sleep(delay_s)
            with received.lock:
                received.requests.append(request)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
