"""Request-size limit (ASGI middleware) and the optional API key."""

from __future__ import annotations

import hmac
import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

API_KEY_ENV = "GUARDSEARCH_API_KEY"
OPEN_PATHS = frozenset({"/healthz", "/docs", "/redoc", "/openapi.json", "/docs/oauth2-redirect"})


def _error_body(type_: str, message: str) -> bytes:
    return json.dumps({"error": {"type": type_, "message": message, "retryable": False}}).encode()


async def _reject(send: Send, status: int, type_: str, message: str) -> None:
    body = _error_body(type_, message)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BodyLimit:
    """Reject request bodies over `max_bytes` with 413, by header or by counting.

    The body is read here (bounded by the limit) and replayed to the app: a chunked
    upload without Content-Length cannot slip past, and the app never sees a partial
    body. Bodies of this service are small JSON documents, so buffering costs nothing.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                await self._too_large(send)
                return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break  # the client went away; let the app see the disconnect
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                await self._too_large(send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, send: Send) -> None:
        await _reject(send, 413, "request_too_large", f"request body over {self.max_bytes} bytes")


class ApiKeyGuard:
    """Require `X-API-Key: KEY` or `Authorization: Bearer KEY` on every non-open path."""

    def __init__(self, app: ASGIApp, key: str) -> None:
        self.app = app
        self.key = key.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        headers: dict[bytes, Any] = dict(scope.get("headers", []))
        given = headers.get(b"x-api-key", b"")
        auth = headers.get(b"authorization", b"")
        if not given and auth.lower().startswith(b"bearer "):
            given = auth[7:].strip()
        if not given or not hmac.compare_digest(given, self.key):
            await _reject(send, 401, "unauthorized", "missing or wrong API key")
            return
        await self.app(scope, receive, send)
