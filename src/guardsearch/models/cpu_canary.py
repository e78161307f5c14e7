"""The canary child: load a GGUF and decode a few tokens, so a native crash kills only us.

    python -m guardsearch.models.cpu_canary MODEL.gguf on|off

Exit 0 when the model decoded; a crash in llama.cpp ends the process by a signal, which
the parent (`cpu_check.check_settings`) reads from the exit status.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Long enough that the prompt runs as a batch (matrix-matrix kernels), then a few
# single-token decodes (matrix-vector kernels): both paths the CPU backends specialise.
_PROMPT = "List the first ten prime numbers, separated by commas: 2, 3, 5, 7,"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[1] not in ("on", "off"):
        print("usage: python -m guardsearch.models.cpu_canary MODEL.gguf on|off", file=sys.stderr)
        return 2
    from guardsearch.models.llamacpp import available_cpus, load_llama

    llm = load_llama(
        Path(args[0]), extra_bufts=args[1] == "on", n_ctx=256, n_threads=available_cpus()
    )
    out = llm.create_completion(_PROMPT, max_tokens=4, temperature=0.0)
    text = out["choices"][0]["text"]  # type: ignore[index]
    print(f"decoded {text!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
