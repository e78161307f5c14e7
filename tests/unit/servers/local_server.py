"""A real HTTP server on 127.0.0.1 that speaks OpenAI chat completions from a function.

For fast tests of what only real sockets show: keep-alive pools, a server that goes
away mid-run and comes back on the same port.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from guardsearch import Message, ModelRequest

Answer = Callable[[ModelRequest], str]


def request_of(payload: dict[str, Any]) -> ModelRequest:
    """The ModelRequest a chat-completions payload carries (what the answer depends on)."""
    return ModelRequest(
        messages=tuple(Message(m["role"], m["content"]) for m in payload["messages"]),
        temperature=payload.get("temperature", 0.0),
        seed=payload.get("seed"),
        max_tokens=payload.get("max_tokens", 512),
    )


class LocalServer:
    """Serves `answer` at http://127.0.0.1:PORT/v1/chat/completions until `stop()`."""

    def __init__(self, answer: Answer, port: int = 0) -> None:
        self.answer = answer
        self.port = port
        self.requests = 0
        self.connections: set[tuple[str, int]] = set()
        self.gone = False
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LocalServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers do

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                payload = json.loads(self.rfile.read(length))
                if owner.gone:  # going away: hang up without an answer
                    self.close_connection = True
                    return
                owner.requests += 1
                owner.connections.add(self.client_address)
                text = owner.answer(request_of(payload))
                body = json.dumps(
                    {
                        "choices": [
                            {"message": {"role": "assistant", "content": text}, "index": 0}
                        ],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 2},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Go away: stop listening and drop every open connection."""
        self.gone = True
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def vanish(self) -> None:
        """Go away from inside a request: hang up on everything from now on, then stop."""
        self.gone = True
        threading.Thread(target=self.stop, daemon=True).start()
