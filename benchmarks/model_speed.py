"""Measure the embedded model's speed and how much prompt work the KV cache saves.

Figures (all through the public `Model` API, so they include Python overhead):
- load: seconds to assemble/verify the GGUF and load it;
- prompt tokens/s: a fresh ~400-token prompt answered with one token;
- generation tokens/s: a long answer to a prompt that is already cached (only one
  prompt token is re-evaluated, so the time is almost all generation): free text,
  grammar-constrained JSON, and the same JSON with llama-cpp-python's eager grammar
  sampling (`lazy_grammar=False`) for comparison;
- prefix reuse: 5 calls sharing a ~300-token prefix with different short suffixes,
  prompt tokens actually evaluated (prompt - cached) against the naive count.

Each figure is measured once per llama.cpp setting in `--extra-bufts` (default both):
`on` lets llama.cpp repack weights into extra buffer types (CPU repack layouts; AMX on
Xeons that have it), `off` keeps the plain layout (the safe setting on AMX CPUs,
see docs/models.md). The top-level figures are those of the first setting.

With `--repeat N` the settings are measured in turns (on, off, on, off, …) so that
load from other processes hits both alike, and the run with the median generation
rate of each setting is kept.

    python benchmarks/model_speed.py [--json] [--threads N] [--extra-bufts on,off] [--repeat N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import time
from typing import Any

from guardsearch.core.messages import Completion, Message, ModelRequest
from guardsearch.models.cpu_check import cpu_summary
from guardsearch.models.embedded import DEFAULT_EMBEDDED, embedded_model_path
from guardsearch.models.llamacpp import LlamaCppModel

LONG_SCHEMA = {
    "type": "array",
    "items": {"type": "string", "maxLength": 40},
    "minItems": 12,
    "maxItems": 12,
}


def _ask(user: str, *, system: str = "You are a helpful assistant.", **kw: Any) -> ModelRequest:
    return ModelRequest(messages=(Message("system", system), Message("user", user)), **kw)


async def _generate(model: LlamaCppModel, request: ModelRequest) -> Completion:
    await model.complete(request.with_max_tokens(1))
    return await model.complete(request)


def _rate(c: Completion) -> dict[str, Any]:
    return {
        "tokens": c.usage.completion_tokens,
        "seconds": round(c.latency_s, 3),
        "tokens_per_s": round(c.usage.completion_tokens / c.latency_s, 1),
    }


def _facts(seed: str, n: int) -> str:
    return " ".join(f"{seed} fact {i}: widget {i} weighs {i * 7 % 50} grams." for i in range(n))


async def measure(threads: int | None, extra_bufts: str = "on") -> dict[str, Any]:
    started = time.perf_counter()
    path = embedded_model_path()
    model = LlamaCppModel(path, n_ctx=4096, n_threads=threads, extra_bufts=extra_bufts)
    model.count_tokens(_ask("warm up"))  # loads the weights
    load_s = time.perf_counter() - started

    # Prompt speed: a prompt nothing in the cache shares (beyond the chat header).
    prompt_req = _ask(_facts("alpha", 25) + "\nWhich widget is heaviest?", max_tokens=1)
    c = await model.complete(prompt_req)
    evaluated = c.usage.prompt_tokens - c.usage.cached_prompt_tokens
    prompt_tps = evaluated / c.latency_s

    # Generation speed: the prompt is cached first, so the timed call is ~all generation.
    gen_req = _ask(_facts("alpha", 25) + "\nRepeat every fact above as a list.", max_tokens=128)
    g = await _generate(model, gen_req)
    json_req = _ask(
        _facts("alpha", 25) + "\nList twelve widget names with their weights.",
        max_tokens=200,
        json_schema=LONG_SCHEMA,
    )
    j = await _generate(model, json_req)
    # The same with llama-cpp-python's own grammar sampling (whole vocabulary per token).
    eager = LlamaCppModel(
        path, n_ctx=4096, n_threads=threads, lazy_grammar=False, extra_bufts=extra_bufts
    )
    e = await _generate(eager, json_req)

    # Prefix reuse: a shared ~300-token prefix, five different short questions.
    prefix = "Reference notes. " + _facts("beta", 24)
    calls = []
    for i, question in enumerate(
        [
            "What does widget 3 weigh?",
            "Which widget weighs 14 grams?",
            "Is widget 9 heavier than widget 2?",
            "Name the lightest widget.",
            "How many widgets are listed?",
        ]
    ):
        r = await model.complete(_ask(f"{prefix}\nQuestion {i}: {question}", max_tokens=16))
        calls.append(
            {
                "prompt_tokens": r.usage.prompt_tokens,
                "cached_prompt_tokens": r.usage.cached_prompt_tokens,
                "evaluated_prompt_tokens": r.usage.prompt_tokens - r.usage.cached_prompt_tokens,
                "completion_tokens": r.usage.completion_tokens,
                "latency_s": round(r.latency_s, 3),
            }
        )
    naive = sum(c["prompt_tokens"] for c in calls)
    actual = sum(c["evaluated_prompt_tokens"] for c in calls)

    return {
        "model": DEFAULT_EMBEDDED.name,
        "path": str(path),
        "machine": {
            "cpus": os.cpu_count(),
            "n_threads": model.n_threads,
            "loadavg_1m": round(os.getloadavg()[0], 2),
            "python": platform.python_version(),
        },
        "extra_bufts": extra_bufts,
        "cpu": cpu_summary(),
        "load_s": round(load_s, 2),
        "prompt": {
            "tokens_evaluated": evaluated,
            "seconds": round(c.latency_s, 3),
            "tokens_per_s": round(prompt_tps, 1),
        },
        "generation": _rate(g),
        "generation_json_grammar": _rate(j),
        "generation_json_grammar_eager": _rate(e),
        "prefix_reuse": {
            "calls": calls,
            "naive_prompt_tokens": naive,
            "evaluated_prompt_tokens": actual,
            "saved_fraction": round(1 - actual / naive, 3),
        },
    }


def _line(label: str, rate: dict[str, Any]) -> str:
    return (
        f"{label:<22}{rate['tokens_per_s']:7.1f} tok/s "
        f"({rate['tokens']} tokens in {rate['seconds']} s)"
    )


def _print_text(r: dict[str, Any]) -> None:
    m = r["machine"]
    print(
        f"model {r['model']}, extra_bufts={r['extra_bufts']} "
        f"({m['n_threads']} threads, load avg {m['loadavg_1m']}; {r['cpu']})"
    )
    print(f"load: {r['load_s']} s")
    p = r["prompt"]
    print(_line("prompt", {**p, "tokens": p["tokens_evaluated"]}))
    print(_line("generation", r["generation"]))
    print(_line("  JSON grammar (lazy)", r["generation_json_grammar"]))
    print(_line("  JSON grammar (eager)", r["generation_json_grammar_eager"]))
    pr = r["prefix_reuse"]
    print("prefix reuse (5 calls, shared prefix):")
    for i, c in enumerate(pr["calls"]):
        print(
            f"  call {i}: prompt {c['prompt_tokens']:4d}  cached {c['cached_prompt_tokens']:4d}"
            f"  evaluated {c['evaluated_prompt_tokens']:4d}  {c['latency_s']} s"
        )
    print(
        f"  evaluated {pr['evaluated_prompt_tokens']} of {pr['naive_prompt_tokens']} naive "
        f"prompt tokens ({pr['saved_fraction']:.0%} saved)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads")
    parser.add_argument(
        "--extra-bufts",
        default="on,off",
        help="llama.cpp extra buffer types to measure, comma-separated (on, off)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="measurements per setting")
    args = parser.parse_args()
    settings = [s.strip() for s in args.extra_bufts.split(",") if s.strip()]
    trials: dict[str, list[dict[str, Any]]] = {s: [] for s in settings}
    for _ in range(max(1, args.repeat)):
        for setting in settings:
            trials[setting].append(asyncio.run(measure(args.threads, setting)))
    runs = [_median_run(trials[s]) for s in settings]
    result = {
        **runs[0],
        "repeat": max(1, args.repeat),
        "by_extra_bufts": {r["extra_bufts"]: _summary(r) for r in runs},
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for r in runs:
            _print_text(r)
            print()


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run whose generation rate is the median of `runs` (one real run, not a blend)."""
    ordered = sorted(runs, key=lambda r: r["generation"]["tokens_per_s"])
    return ordered[len(ordered) // 2]


def _summary(r: dict[str, Any]) -> dict[str, Any]:
    """The headline rates of one setting, for the side-by-side table."""
    return {
        "load_s": r["load_s"],
        "loadavg_1m": r["machine"]["loadavg_1m"],
        "prompt_tokens_per_s": r["prompt"]["tokens_per_s"],
        "generation_tokens_per_s": r["generation"]["tokens_per_s"],
        "json_grammar_tokens_per_s": r["generation_json_grammar"]["tokens_per_s"],
    }


if __name__ == "__main__":
    main()
