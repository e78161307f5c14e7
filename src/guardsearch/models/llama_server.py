"""Start llama-cpp-python's OpenAI-compatible server with the settings that work on this CPU.

    python -m guardsearch.models.llama_server --model embedded --port 8765 [server options]

Takes every option of `python -m llama_cpp.server` (it needs `llama-cpp-python[server]`,
part of the `test` extra); `--model embedded` names the shipped GGUF. Before the server
loads the model, `cpu_check` picks the llama.cpp settings (a canary child on first use,
then the recorded choice), so the server does not segfault where the in-process
embedded model would not either (docs/models.md, "CPUs with AMX").
"""

from __future__ import annotations

import sys
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


if __name__ == "__main__":
    sys.exit(main())
