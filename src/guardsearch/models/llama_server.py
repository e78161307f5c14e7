"""Start llama-cpp-python's OpenAI-compatible server with the settings that work on this CPU.

    python -m guardsearch.models.llama_server --model embedded --port 8765 [server options]

Takes every option of `python -m llama_cpp.server` (it needs `llama-cpp-python[server]`,
part of the `test` extra); `--model embedded` names the shipped GGUF. Before the server
loads the model, `cpu_check` picks the llama.cpp settings (a canary child on first use,
then the recorded choice), so the server does not segfault where the in-process
embedded model would not either (docs/models.md, "CPUs with AMX").

`LlamaServerProcess` runs it in the background on 127.0.0.1 (the real-server tests and
`benchmarks/server_vs_embedded.py`).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from guardsearch.core.errors import GuardsearchError
from guardsearch.models.cpu_check import resolve_settings


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if "--model" not in args or args.index("--model") + 1 >= len(args):
        print("usage: python -m guardsearch.models.llama_server --model GGUF|embedded [...]")
        return 2
    at = args.index("--model") + 1
    try:
        if args[at] == "embedded":
            from guardsearch.models.embedded import embedded_model_path

            args[at] = str(embedded_model_path())
        settings = resolve_settings(Path(args[at]))
        from guardsearch.models.llamacpp import extra_bufts_default

        with extra_bufts_default(settings.extra_bufts):
            from llama_cpp.server.__main__ import main as serve

            sys.argv = ["llama_cpp.server", *args]
            serve()  # type: ignore[no-untyped-call]
    except GuardsearchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except ImportError as exc:
        print(f"error: {exc}; pip install 'llama-cpp-python[server]'", file=sys.stderr)
        return 2
    return 0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LlamaServerProcess:
    """This launcher in a child process on 127.0.0.1:`port`, serving `model` as `alias`."""

    def __init__(
        self,
        model: str = "embedded",
        *,
        alias: str = "qwen",
        port: int | None = None,
        n_ctx: int = 4096,
        log: Path | None = None,
    ) -> None:
        self.model = model
        self.alias = alias
        self.port = port or free_port()
        self.n_ctx = n_ctx
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def spec(self, options: str = "") -> str:
        """The `openai:` model spec of this server (`options`: `structured=...&...`)."""
        return f"openai:{self.url}#{self.alias}" + (f"?{options}" if options else "")

    def start(self, wait_s: float = 180.0) -> LlamaServerProcess:
        """Start the server and wait until `/v1/models` answers (the model is loaded)."""
        import httpx

        # The child imports guardsearch from where this process did.
        src = str(Path(__file__).resolve().parents[2])
        path = os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))
        out = open(self.log, "ab") if self.log else subprocess.DEVNULL  # noqa: SIM115
        command = [sys.executable, "-m", "guardsearch.models.llama_server"]
        command += ["--model", self.model, "--model_alias", self.alias, "--host", "127.0.0.1"]
        command += ["--port", str(self.port), "--n_ctx", str(self.n_ctx), "--verbose", "False"]
        self.process = subprocess.Popen(
            command, env={**os.environ, "PYTHONPATH": path}, stdout=out, stderr=out
        )
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise GuardsearchError(f"llama server exited with {self.process.returncode}")
            try:
                if httpx.get(self.url + "/models", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.stop()
        raise GuardsearchError(f"llama server on {self.url} did not answer in {wait_s:.0f}s")

    def kill(self) -> None:
        """Go away at once, as a crashed server does."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 15 s)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.kill()

    def __enter__(self) -> LlamaServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


if __name__ == "__main__":
    sys.exit(main())
