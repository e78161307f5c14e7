"""The Host-header allow-list (DNS rebinding) and protocol errors in the JSON shape.

A page on any web site can make a browser send requests to `http://127.0.0.1:8000`
only under its own host name: DNS rebinding points that name at 127.0.0.1, and the
browser then treats the service as the page's own origin. The request still carries
the page's name in its `Host` header, so a service that answers only the names it is
served under (`HostGuard`) answers such a page with a 400. `guardsearch serve` allows
the loopback names and the host it binds; more with `--allowed-host` or
`GUARDSEARCH_ALLOWED_HOSTS`.

uvicorn answers a request it cannot parse (a broken request line or header) itself,
with a plain-text 400; `JsonErrorsH11Protocol` makes that answer the service's JSON
error shape too. What never reaches an HTTP parser (a connection cut mid-request) has
no answer at all.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable

import h11
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from guardsearch.server.security import reject

ALLOWED_HOSTS_ENV = "GUARDSEARCH_ALLOWED_HOSTS"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
_WILDCARD_BINDS = ("0.0.0.0", "::", "")


def host_name(value: str) -> str:
    """`Host` without its port, lower case: `[::1]:8000` -> `[::1]`, `a.org:80` -> `a.org`."""
    value = value.strip().lower()
    if value.startswith("["):
        return value.split("]", 1)[0] + "]"
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def default_hosts(bind: str, extra: Iterable[str] = ()) -> list[str]:
    """The names a server bound to `bind` answers: the loopback names, the bound
    address itself (unless it is a wildcard), `extra`, and `$GUARDSEARCH_ALLOWED_HOSTS`
    (comma-separated); `*` in any of them turns the check off."""
    names = list(LOOPBACK_NAMES)
    if bind not in _WILDCARD_BINDS:
        names.append(f"[{bind}]" if ":" in bind else bind)
    names += list(extra)
    names += os.environ.get(ALLOWED_HOSTS_ENV, "").replace(",", " ").split()
    return list(dict.fromkeys(host_name(n) if n != "*" else n for n in names))


class HostGuard:
    """Answer only requests whose `Host` is one of `allowed` (400 otherwise)."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str]) -> None:
        self.app = app
        self.allowed = frozenset(host_name(h) for h in allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or "*" in self.allowed:
            await self.app(scope, receive, send)
            return
        host = next((v for k, v in scope.get("headers", []) if k == b"host"), b"")
        if host_name(host.decode("latin-1")) not in self.allowed:
            await reject(send, 400, "invalid_request", "this server does not answer that Host")
            return
        await self.app(scope, receive, send)


class JsonErrorsH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, whose own 400 (an unparseable request) answers in
    the service's JSON error shape."""

    def send_400_response(self, msg: str) -> None:
        body = json.dumps(
            {"error": {"type": "invalid_request", "message": msg, "retryable": False}}
        ).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        for event in (
            h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
            h11.Data(data=body),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event))
        self.transport.close()
