"""Game of 24 through llama-cpp-python's OpenAI-compatible server vs the embedded backend.

The same model file (the embedded Qwen2.5-Coder-0.5B GGUF), the same puzzles (rows
900-999, every 5th: 20), the same method (astar, at most 60 calls per puzzle, the
`guardsearch bench` game24 suite's astar): once in process through llama.cpp
(`embedded`), once over HTTP through `openai:` against the launcher
`python -m guardsearch.models.llama_server --model embedded`, started here on a free
port. The server's structured-output mode is negotiated as for any server
(`grammar`, the embedded backend's own grammar, for llama-cpp-python's server).

Resumable and run in pieces (model time is shared: one model process at a time):

    B=benchmarks/server_vs_embedded.py
    flock /tmp/gs-model.lock python $B run --backend server --limit 10
    flock /tmp/gs-model.lock python $B run --backend embedded --limit 10
    ... (again for the other 10)
    python benchmarks/server_vs_embedded.py report

Each finished puzzle is one line of benchmarks/results/server_vs_embedded/BACKEND.jsonl;
`report` writes benchmarks/results/server_vs_embedded.md and .json.

The embedded side can come from a `guardsearch bench game24 --methods astar
--budget-calls 60` run instead (the same suite, method, budget and trial 0; the embedded
model decodes at temperature 0 the same way in both): `import TRIALS.jsonl` copies the
trials of these puzzles, each marked with the trial it came from.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from guardsearch.apps.game24.suite import Game24Suite, select
from guardsearch.core.budget import Budget
from guardsearch.core.errors import BudgetExceeded
from guardsearch.core.events import Trace
from guardsearch.experiments.suite import MethodSpec, Problem
from guardsearch.models.base import Model, aclose_model
from guardsearch.models.llama_server import LlamaServerProcess
from guardsearch.models.metered import Metered
from guardsearch.models.spec import model_from_spec

PROBLEMS = {"range": "900:1000", "every": 5}
BUDGET = 60
OUT = Path(__file__).parent / "results" / "server_vs_embedded"
REPORT = Path(__file__).parent / "results" / "server_vs_embedded"
BACKENDS = ("server", "embedded")


def done(backend: str) -> dict[str, dict[str, Any]]:
    path = OUT / f"{backend}.jsonl"
    if not path.exists():
        return {}
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {row["problem"]: row for row in rows}


async def solve(model: Model, problem: Problem) -> dict[str, Any]:
    metered = Metered(model, Budget.of(calls=BUDGET), Trace())
    started = time.perf_counter()
    try:
        out = await Game24Suite().run(MethodSpec("astar", "astar", {}), problem, metered, 0)
    except BudgetExceeded:
        out = {"succeeded": False, "termination": "budget_exhausted"}
    usage = metered.usage
    fallbacks = [e.data for e in metered.trace.of_kind("note") if "structured_fallback" in e.data]
    modes = {
        (e.data.get("server") or {}).get("structured", "in-process")
        for e in metered.trace.of_kind("model_call")
    }
    return {
        "succeeded": bool(out["succeeded"]),
        "termination": str(out["termination"]),
        "answer": out.get("answer"),
        "calls": usage.calls,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cached_prompt_tokens": usage.cached_prompt_tokens,
        "seconds": round(time.perf_counter() - started, 2),
        "structured": sorted(modes),
        "fallbacks": len(fallbacks),
    }


async def run_piece(backend: str, limit: int, model: Model, spec: str) -> int:
    finished = done(backend)
    todo = [p for p in select(PROBLEMS) if p.id not in finished][:limit]
    OUT.mkdir(parents=True, exist_ok=True)
    try:
        for problem in todo:
            row = await solve(model, problem)
            row = {"problem": problem.id, "numbers": problem.input, "spec": spec, **row}
            with (OUT / f"{backend}.jsonl").open("a") as out:
                out.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)
    finally:
        await aclose_model(model)
    return len(todo)


def run(backend: str, limit: int) -> None:
    if backend == "embedded":
        asyncio.run(run_piece(backend, limit, model_from_spec("embedded"), "embedded"))
        return
    log = Path(tempfile.gettempdir()) / "server_vs_embedded.server.log"
    with LlamaServerProcess("embedded", log=log) as server:
        spec = server.spec()
        # The spec names this run's port; rows record the spec without it.
        asyncio.run(run_piece(backend, limit, model_from_spec(spec), "openai:<local>/v1#qwen"))


def import_trials(path: Path, commit: str = "") -> int:
    """Embedded rows from a `guardsearch bench` trials file of the same method and budget."""
    wanted = {p.id: p for p in select(PROBLEMS)}
    found: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        trial = json.loads(line) if line.strip() else {}
        if (
            trial.get("problem") in wanted
            and trial.get("method") == "astar"
            and trial.get("budget") == BUDGET
            and trial.get("trial") == 0
            and "0.5b" in str(trial.get("model"))
        ):
            found[trial["problem"]] = trial  # a later line (a rerun) wins
    finished = done("embedded")
    OUT.mkdir(parents=True, exist_ok=True)
    added = 0
    with (OUT / "embedded.jsonl").open("a") as out:
        for problem, trial in sorted(found.items()):
            if problem in finished:
                continue
            row = {
                "problem": problem,
                "numbers": wanted[problem].input,
                "spec": "embedded",
                "succeeded": bool(trial["succeeded"]),
                "termination": str(trial["termination"]),
                "answer": trial.get("answer"),
                **{k: trial[k] for k in ("calls", "prompt_tokens", "completion_tokens")},
                "cached_prompt_tokens": trial.get("cached_prompt_tokens", 0),
                "seconds": trial["seconds"],
                "structured": ["in-process"],
                "fallbacks": 0,
                "source": f"guardsearch bench trial {trial['key']}"
                + (f" at {commit}" if commit else ""),
            }
            out.write(json.dumps(row) + "\n")
            added += 1
    print(f"{added} embedded rows imported from {path} ({len(found)} matching trials)")
    return added


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows) or 1
    return {
        "puzzles": len(rows),
        "solved": sum(r["succeeded"] for r in rows),
        "success": round(sum(r["succeeded"] for r in rows) / n, 3),
        "calls": sum(r["calls"] for r in rows),
        "mean_calls": round(sum(r["calls"] for r in rows) / n, 1),
        "prompt_tokens": sum(r["prompt_tokens"] for r in rows),
        "completion_tokens": sum(r["completion_tokens"] for r in rows),
        "cached_prompt_tokens": sum(r["cached_prompt_tokens"] for r in rows),
        "mean_seconds": round(sum(r["seconds"] for r in rows) / n, 1),
        "terminations": _count(r["termination"] for r in rows),
        "structured": sorted({m for r in rows for m in r["structured"]}),
        "fallbacks": sum(r["fallbacks"] for r in rows),
    }


def _count(values: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return dict(sorted(counts.items()))


def report() -> None:
    by = {b: done(b) for b in BACKENDS}
    common = sorted(set(by["server"]) & set(by["embedded"]))
    sums = {b: summary([by[b][p] for p in common]) for b in BACKENDS}
    both = [p for p in common if by["server"][p]["succeeded"] and by["embedded"][p]["succeeded"]]
    data = {
        "problems": PROBLEMS,
        "method": "astar",
        "budget_calls": BUDGET,
        "puzzles_in_both": len(common),
        "planned": len(select(PROBLEMS)),
        "solved_by_both": len(both),
        "by_backend": sums,
        "rows": {b: [by[b][p] for p in common] for b in BACKENDS},
    }
    REPORT.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")
    lines = [
        "# Game of 24: llama-cpp-python's server vs the embedded backend",
        "",
        f"Rows 900-999 every 5th, astar, at most {BUDGET} calls; {len(common)} of "
        f"{len(select(PROBLEMS))} puzzles run on both. Same GGUF (embedded Qwen2.5-Coder-0.5B).",
        "Reproduce: see the module docstring of `benchmarks/server_vs_embedded.py`.",
        "",
        "| backend | solved | success | calls (mean) | prompt tok | completion tok "
        "| cached prompt tok | s / puzzle | structured output | terminations |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for b in BACKENDS:
        s = sums[b]
        lines.append(
            f"| {b} | {s['solved']}/{s['puzzles']} | {s['success']:.0%} | {s['calls']} "
            f"({s['mean_calls']}) | {s['prompt_tokens']:,} | {s['completion_tokens']:,} | "
            f"{s['cached_prompt_tokens']:,} | {s['mean_seconds']} | {', '.join(s['structured'])} | "
            + ", ".join(f"{k} {v}" for k, v in s["terminations"].items())
            + " |"
        )
    same = [p for p in common if by["server"][p]["answer"] == by["embedded"][p]["answer"]]
    imported = [str(by["embedded"][p]["source"]) for p in common if "source" in by["embedded"][p]]
    lines += [
        "",
        f"Solved by both: {len(both)}; the same answer on both: {len(same)} of {len(common)}. "
        "Seconds are wall time on the shared 2-core box, measured under load from other "
        "processes (the two backends at different times); calls, tokens and success are "
        "not affected by load. The server reports no cached prompt tokens: llama-cpp-python's "
        "server reuses the prompt prefix too but does not say how much.",
    ]
    if imported:
        lines += [
            "",
            f"Embedded rows: {len(imported)} of {len(common)} are trials of a `guardsearch "
            "bench game24 --methods astar --budget-calls 60` run (the same suite, method, "
            "budget and trial), imported with `python benchmarks/server_vs_embedded.py "
            f"import TRIALS.jsonl`; e.g. {imported[0].removeprefix('guardsearch bench ')}.",
        ]
    lines += [
        "",
        "| puzzle | server | embedded |",
        "|---|---|---|",
    ]
    for p in common:
        cells = [
            f"{'solved' if by[b][p]['succeeded'] else by[b][p]['termination']}, "
            f"{by[b][p]['calls']} calls"
            for b in BACKENDS
        ]
        lines.append(f"| {by['server'][p]['numbers']} | {cells[0]} | {cells[1]} |")
    REPORT.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    piece = sub.add_parser("run", help="solve the next LIMIT unsolved puzzles on one backend")
    piece.add_argument("--backend", choices=BACKENDS, required=True)
    piece.add_argument("--limit", type=int, default=10)
    sub.add_parser("report", help="write the side-by-side report of the puzzles both ran")
    imported = sub.add_parser("import", help="embedded rows from a `guardsearch bench` run")
    imported.add_argument("trials", type=Path, help="its trials.jsonl")
    imported.add_argument("--commit", default="", help="the commit that run was made on")
    args = parser.parse_args()
    if args.command == "run":
        run(args.backend, args.limit)
    elif args.command == "import":
        import_trials(args.trials, args.commit)
    else:
        report()


if __name__ == "__main__":
    main()
