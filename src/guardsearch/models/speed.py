"""How fast a local model runs on this machine, and how much memory it takes.

`guardsearch models --measure` runs a child process per embedded model
(`python -m guardsearch.models.speed MODEL.gguf on|off`): it loads the model with the
llama.cpp settings chosen for this CPU (cpu_check), reads a prompt, writes up to 64
tokens, and prints one JSON line: load seconds, prompt tokens a second (reading),
completion tokens a second (writing), threads and its peak RSS. The parent records it
per machine, keyed like the llama.cpp settings (CPU, llama-cpp-python, model file), in
`$GUARDSEARCH_HOME/model-speed.json`; `guardsearch models` shows what is recorded.

A child, not this process: its peak RSS is the model's alone, and a crash ends it only.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from guardsearch.core.errors import ModelError
from guardsearch.models.cpu_check import (
    cpu_summary,
    machine_key,
    read_machine_records,
    record_for_machine,
    resolve_settings,
    run_model_child,
    stderr_tail,
)

RECORD_FILE = "model-speed.json"
TIMEOUT_S = 900.0
WRITE_TOKENS = 64
# A prompt about as long as a search step's (read as one batch), and an answer that does
# not stop early: a list of numbers to go on with.
PROMPT = "Continue this list, one number a line, with no other text.\n" + "".join(
    f"{n}\n" for n in range(1, 121)
)

# Runs the child for a model file and llama.cpp setting; returns its JSON figures.
Runner = Callable[[Path, bool], dict[str, Any]]


def run_child(model_path: Path, extra_bufts: bool) -> dict[str, Any]:
    done = run_model_child(
        "guardsearch.models.speed",
        model_path,
        extra_bufts,
        what="the speed measurement",
        timeout=TIMEOUT_S,
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = stderr_tail(done) or "no message"
        raise ModelError(f"measuring {model_path.name} failed (exit {done.returncode}): {tail}")
    figures: dict[str, Any] = json.loads(lines[-1])
    return figures


def measure(model_path: Path, *, runner: Runner | None = None) -> dict[str, Any]:
    """Measure `model_path` now in a child process, record the figures and return them."""
    settings = resolve_settings(model_path)
    figures = (runner or run_child)(model_path, settings.extra_bufts)
    figures |= {
        "measured": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpu": cpu_summary(),
        "extra_bufts": settings.extra_bufts,
    }
    record_for_machine(RECORD_FILE, model_path, figures | {"model": str(model_path)})
    return figures


def recorded(model_path: Path) -> dict[str, Any] | None:
    """The figures measured for this model file on this machine, if any."""
    entry = read_machine_records(RECORD_FILE).get(machine_key(model_path))
    return entry if isinstance(entry, dict) else None


def describe(figures: dict[str, Any]) -> str:
    """One line: `31 tok/s reading, 9.8 tok/s writing, 2 threads, peak RSS 790 MB`."""
    return (
        f"{figures['read_tps']:.0f} tok/s reading, {figures['write_tps']:.1f} tok/s writing, "
        f"{figures['threads']} thread{'s' if figures['threads'] != 1 else ''}, "
        f"peak RSS {figures['peak_rss_mb']:.0f} MB, load {figures['load_s']:.1f} s"
    )


def child(model_path: Path, extra_bufts: bool) -> dict[str, Any]:
    """In the child: load, read the prompt (one token written), then write on from it."""
    from guardsearch.models.llamacpp import available_cpus, load_llama

    threads = available_cpus()
    began = time.perf_counter()
    llm = load_llama(model_path, extra_bufts=extra_bufts, n_ctx=1024, n_threads=threads)
    loaded = time.perf_counter()
    prompt_tokens = len(llm.tokenize(PROMPT.encode()))
    llm.create_completion(PROMPT, max_tokens=1, temperature=0.0)
    read = time.perf_counter()
    # The prompt is in llama.cpp's cache now: this call's time is writing.
    out: Any = llm.create_completion(PROMPT, max_tokens=WRITE_TOKENS, temperature=0.0)
    wrote = time.perf_counter()
    written = int(out["usage"]["completion_tokens"])
    return {
        "load_s": round(loaded - began, 2),
        "prompt_tokens": prompt_tokens,
        "read_tps": round(prompt_tokens / (read - loaded), 1),
        "written_tokens": written,
        "write_tps": round(written / (wrote - read), 2),
        "threads": threads,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[1] not in ("on", "off"):
        print("usage: python -m guardsearch.models.speed MODEL.gguf on|off", file=sys.stderr)
        return 2
    print(json.dumps(child(Path(args[0]), args[1] == "on")), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
