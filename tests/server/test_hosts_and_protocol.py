"""A real server (uvicorn on 127.0.0.1, as `guardsearch serve` runs it): requests for a
Host name it is not served under get a 400 (DNS rebinding), and a request uvicorn
cannot parse gets the JSON error shape, not plain text (issue 34, item 6)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest
from live_server import live_server

from guardsearch import ScriptedModel
from guardsearch.server import create_app
from guardsearch.server.hosts import JsonErrorsH11Protocol, default_hosts, host_name


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    app = create_app(model=ScriptedModel(["{}"]), providers=[], api_key=[],
                     allowed_hosts=default_hosts("127.0.0.1"))  # fmt: skip
    with live_server(app, http=JsonErrorsH11Protocol) as free:
        yield free


def exchange(port: int, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(raw)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


def get(port: int, host: str | None) -> tuple[int, dict[str, str], bytes]:
    line = f"Host: {host}\r\n" if host is not None else ""
    return exchange(port, f"GET /healthz HTTP/1.1\r\n{line}Connection: close\r\n\r\n".encode())


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]", "LOCALHOST"])
def test_the_loopback_names_are_answered(port: int, host: str) -> None:
    status, _, body = get(port, f"{host}:{port}")
    assert status == 200 and json.loads(body)["status"] == "ok"


@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:80", "127.0.0.1.nip.io"])
def test_another_host_name_is_refused_in_the_json_shape(port: int, host: str) -> None:
    status, headers, body = get(port, host)
    assert status == 400 and headers["content-type"] == "application/json"
    assert json.loads(body)["error"]["type"] == "invalid_request"


@pytest.mark.parametrize(
    "raw",
    [
        b"GARBAGE\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nBad Header Line\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: x\r\n\r\n",
    ],
)
def test_a_request_uvicorn_cannot_parse_gets_the_json_shape(port: int, raw: bytes) -> None:
    status, headers, body = exchange(port, raw)
    assert status == 400 and headers["content-type"] == "application/json", (headers, body)
    error = json.loads(body)["error"]
    assert error["type"] == "invalid_request" and error["message"] and not error["retryable"]


def test_the_allowed_names_follow_the_bind_address_and_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GUARDSEARCH_ALLOWED_HOSTS", raising=False)
    assert default_hosts("0.0.0.0") == ["localhost", "127.0.0.1", "[::1]"]
    assert "10.0.0.5" in default_hosts("10.0.0.5") and "[fe80::1]" in default_hosts("fe80::1")
    monkeypatch.setenv("GUARDSEARCH_ALLOWED_HOSTS", "research.example.org, Other.Example:443")
    assert default_hosts("127.0.0.1")[-2:] == ["research.example.org", "other.example"]
    assert host_name("[::1]:8000") == "[::1]" and host_name("a.org:80") == "a.org"
