"""Start llama-cpp-python's OpenAI-compatible server with the settings that work on this CPU.

    python -m guardsearch.models.llama_server --model embedded --port 8765 [server options]

Takes every option of `python -m llama_cpp.server` (it needs `llama-cpp-python[server]`,
part of the `test` extra); `--model embedded` names the shipped GGUF. Before the server
loads the model, `cpu_check` picks the llama.cpp settings (a canary child on first use,
then the recorded choice), so the server does not segfault where the in-process
embedded model would not either (docs/models.md, "CPUs with AMX").

It also decodes as the embedded backend does, which the plain server does not:

- threads: llama-cpp-python's server generates on half the CPUs by default (one
  thread on a 2-core machine, half the speed); unless `--n_threads` is given, the
  launcher uses every CPU this process may run on, as `LlamaCppModel` does;
- grammars: the server masks the whole ~150k-token vocabulary with the request's
  grammar at every token (about as long as the 0.5B model's forward pass); the
  launcher's models check the grammar against the token they would pick first and
  mask only on rejection (`llamacpp._use_lazy_grammar`: the same tokens under greedy
  decoding);
- repeat penalty: the server's default is 1.1, the embedded backend's 1.0 (a penalty
  on JSON's repeated quotes and brackets); the launcher's default is 1.0, and a
  request's own `repeat_penalty` still wins.

Without these, Game of 24 "4 5 6 10" through the plain server had not been solved
after 24 calls and 300 s on the loaded 2-core box (the embedded backend: 6 calls).

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
from typing import Any

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

            serve_lazy_grammars()
            serve_repeat_penalty(1.0)
            sys.argv = ["llama_cpp.server", *server_args(args)]
            serve()  # type: ignore[no-untyped-call]
    except GuardsearchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except ImportError as exc:
        print(f"error: {exc}; pip install 'llama-cpp-python[server]'", file=sys.stderr)
        return 2
    return 0


def server_args(args: list[str]) -> list[str]:
    """`args` with the thread counts the embedded backend uses, unless given."""
    from guardsearch.models.llamacpp import available_cpus

    out = list(args)
    for option in ("--n_threads", "--n_threads_batch"):
        if option not in out:
            out += [option, str(available_cpus())]
    return out


def serve_lazy_grammars() -> None:
    """Every model the server loads in this process samples with the lazy grammar."""
    import llama_cpp

    from guardsearch.models.llamacpp import _use_lazy_grammar

    if getattr(llama_cpp.Llama, "_guardsearch_lazy", False):
        return

    class LazyGrammarLlama(llama_cpp.Llama):
        _guardsearch_lazy = True

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            _use_lazy_grammar(self)

    # llama_cpp.server.model builds its models as `llama_cpp.Llama(...)`.
    llama_cpp.Llama = LazyGrammarLlama  # type: ignore[misc]


def serve_repeat_penalty(value: float) -> None:
    """The server's default `repeat_penalty` (a request may still send its own)."""
    from llama_cpp.server import types

    for request in (types.CreateCompletionRequest, types.CreateChatCompletionRequest):
        request.model_fields["repeat_penalty"].default = value
        request.model_rebuild(force=True)


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
        command = [sys.executable, "-m", "guardsearch.models.llama_server"]
        command += ["--model", self.model, "--model_alias", self.alias, "--host", "127.0.0.1"]
        command += ["--port", str(self.port), "--n_ctx", str(self.n_ctx), "--verbose", "False"]
        env = {**os.environ, "PYTHONPATH": path}
        if self.log is None:
            out = subprocess.DEVNULL
            self.process = subprocess.Popen(command, env=env, stdout=out, stderr=out)
        else:
            with open(self.log, "ab") as log:  # the child keeps its own handle
                self.process = subprocess.Popen(command, env=env, stdout=log, stderr=log)
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
