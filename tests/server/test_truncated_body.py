"""A real server (uvicorn on 127.0.0.1): a body cut short of its Content-Length, the
client's write side closed, must not start a run (issue 19, item 8)."""

from __future__ import annotations

import json
import socket
import time
import urllib.request
from collections.abc import Iterator

import pytest
from live_server import live_server

from guardsearch import ScriptedModel
from guardsearch.core.messages import ModelRequest
from guardsearch.server import create_app

BODY = json.dumps({"task": "Who painted The Night Watch?"}).encode()


@pytest.fixture
def server() -> Iterator[tuple[int, list[ModelRequest]]]:
    calls: list[ModelRequest] = []

    def answer(request: ModelRequest) -> str:
        calls.append(request)
        return "{}"

    app = create_app(model=ScriptedModel(answer), providers=[], api_key=[])
    with live_server(app) as port:
        yield port, calls


def send_short(port: int, declared: int, sent: bytes) -> bytes:
    """Declare `declared` body bytes, send `sent`, close the write side, read the answer."""
    head = (
        b"POST /run HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % declared
    )
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(head + sent)
        conn.shutdown(socket.SHUT_WR)
        try:
            return conn.recv(1000)
        except TimeoutError:
            return b""


def test_a_body_short_of_its_content_length_runs_nothing(
    server: tuple[int, list[ModelRequest]],
) -> None:
    port, calls = server
    # A whole, valid JSON task that promised more bytes than it sent, and cut ones.
    for declared, sent in [(len(BODY) + 10, BODY), (len(BODY), BODY[:10]), (len(BODY), b"")]:
        answer = send_short(port, declared, sent)
        assert not answer.startswith(b"HTTP/1.1 200"), answer
    time.sleep(0.5)  # a run that had started would have called the model by now
    metrics = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read()
    assert calls == []
    assert b"research_requests_total{" not in metrics  # no run was even counted
