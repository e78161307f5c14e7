"""uvicorn on 127.0.0.1 in a thread, for the tests that need a real server."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


@contextmanager
def live_server(app: Any, **config: Any) -> Iterator[int]:
    """Serve `app` on a free port of 127.0.0.1 (more uvicorn.Config options in
    `config`); yields the port, stops the server when the block ends."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config.setdefault("log_level", "warning")
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, **config))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield port
    finally:
        srv.should_exit = True
        thread.join(timeout=20)
