"""Request-size limit (ASGI middleware) and the optional API keys."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from guardsearch.core.errors import ConfigError

API_KEY_ENV = "GUARDSEARCH_API_KEY"
API_KEY_FILE_ENV = "GUARDSEARCH_API_KEY_FILE"
ADMIN_KEY_ENV = "GUARDSEARCH_ADMIN_KEY"
KEY_SCOPE = "guardsearch.api_key_id"
ADMIN_SCOPE = "guardsearch.admin"
# /ui is the viewer's page alone (no data in it); its data under /ui/api takes the key.
OPEN_PATHS = frozenset(
    {"/healthz", "/docs", "/redoc", "/openapi.json", "/docs/oauth2-redirect", "/ui"}
)


def _error_body(type_: str, message: str) -> bytes:
    return json.dumps({"error": {"type": type_, "message": message, "retryable": False}}).encode()


async def reject(send: Send, status: int, type_: str, message: str) -> None:
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
    body. A body that ends short of its Content-Length, or a client that goes away
    before its body is complete, is never passed on as if it were whole (400, or
    nothing at all when nobody is left to answer). Bodies of this service are small
    JSON documents, so buffering costs nothing.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared: int | None = None
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                if not value.isdigit() or len(value) > 12:
                    await reject(send, 400, "invalid_request", "bad Content-Length header")
                    return
                declared = int(value)
        if declared is not None and declared > self.max_bytes:
            await self._too_large(send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away mid-body: nothing to run, nobody to answer
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                await self._too_large(send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        if declared is not None and size != declared:
            await reject(
                send,
                400,
                "invalid_request",
                f"request body is {size} bytes, its Content-Length says {declared}",
            )
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, send: Send) -> None:
        await reject(send, 413, "request_too_large", f"request body over {self.max_bytes} bytes")


def key_id(key: str) -> str:
    """A key's name in run records and logs: a short digest, never the key itself."""
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def read_keys(
    values: Iterable[str] = (), files: Iterable[str | os.PathLike[str]] = ()
) -> list[str]:
    """The API keys a server accepts: `values` (each may hold several, separated by
    commas or whitespace) and key files (one key per line; blank lines and `#` comments
    are skipped). A ConfigError names a file that cannot be read; keys are kept in order,
    once each."""
    keys: list[str] = []
    for value in values:
        keys.extend(value.replace(",", " ").split())
    for file in files:
        try:
            text = Path(file).read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read API key file {file}: {exc}") from exc
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                keys.append(line)
    return list(dict.fromkeys(keys))


class ApiKeyGuard:
    """Require `X-API-Key: KEY` or `Authorization: Bearer KEY` on every non-open path.

    Any of `keys` (and of `admin_keys`) is accepted. Each is compared in constant time,
    and all of them are compared, so the time taken says nothing about which key (if
    any) came close. The accepted key's `key_id` goes into the request's scope
    (`scope[KEY_SCOPE]`), and `scope[ADMIN_SCOPE]` says whether it is an admin key, so an
    endpoint can tell whose request it is (server/tenancy.py).
    """

    def __init__(self, app: ASGIApp, keys: Sequence[str], admin_keys: Sequence[str] = ()) -> None:
        self.app = app
        self.keys = [(k.encode(), key_id(k), False) for k in keys if k not in admin_keys]
        self.keys += [(k.encode(), key_id(k), True) for k in admin_keys]

    def _match(self, given: bytes) -> tuple[str, bool] | None:
        found = None
        for key, ident, admin in self.keys:
            if hmac.compare_digest(given, key) and found is None:
                found = ident, admin
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        headers: dict[bytes, Any] = dict(scope.get("headers", []))
        given = headers.get(b"x-api-key", b"")
        auth = headers.get(b"authorization", b"")
        if not given and auth.lower().startswith(b"bearer "):
            given = auth[7:].strip()
        found = self._match(given) if given else None
        if found is None:
            await reject(send, 401, "unauthorized", "missing or wrong API key")
            return
        scope[KEY_SCOPE], scope[ADMIN_SCOPE] = found
        await self.app(scope, receive, send)


_RUN_PATH = re.compile(r"(/runs/)[^/?\s]+")
ACCESS_LOGGER = "uvicorn.access"


class HideRunIds(logging.Filter):
    """Masks async run ids in access log lines (`GET /runs/…`): a job id is a bearer
    token, and log files are read by more people than the API keys were given to."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                _RUN_PATH.sub(r"\1…", a) if isinstance(a, str) else a for a in record.args
            )
        elif isinstance(record.msg, str):
            record.msg = _RUN_PATH.sub(r"\1…", record.msg)
        return True


def hide_run_ids(logger: str = ACCESS_LOGGER) -> None:
    """Install `HideRunIds` on the access logger (once, however many apps are built)."""
    target = logging.getLogger(logger)
    if not any(isinstance(f, HideRunIds) for f in target.filters):
        target.addFilter(HideRunIds())
