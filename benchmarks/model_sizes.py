"""The size table: the embedded 0.5B, the 1.5B and the ladder (0.5B -> 1.5B) on the same work.

Game of 24 with astar (ToT's test rows, a call cap per puzzle), each model on the same
puzzles, paired: per model the success rate with its 95% Wilson interval, the paired
delta against the 0.5B with its 95% interval (Newcombe, paired), calls, seconds per
call and per solved puzzle, peak RSS, and for the ladder the calls per model and its
escalations. Plan search per model is `guardsearch bench run benchmarks/plan_sizes.yaml`,
research per model `benchmarks/research_models.py`.

A run goes puzzle by puzzle, each model in turn, each (model, puzzle) in a process of
its own (so its peak RSS is that model's), appends one JSON line per (model, puzzle) to
`--rows-file` and skips the pairs it already holds, so a long table is measured in
pieces, each under the model lock:

    flock /tmp/gs-model.lock python3 benchmarks/model_sizes.py run \\
        --rows 900:1000:20 --cpus 1 --minutes 17
    python3 benchmarks/model_sizes.py summary --rows 900:1000:20

`--minutes` (no limit unless given) stops before the next (model, puzzle) once crossed
(the next piece resumes there). `--cpus 1` runs llama.cpp on one thread: on a box
loaded past its cores, two threads that spin-wait on each other slowed a 0.5B call to
minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from guardsearch.apps.game24.suite import select, suite
from guardsearch.core.budget import Budget
from guardsearch.core.errors import BudgetExceeded
from guardsearch.core.events import Trace
from guardsearch.core.model_usage import model_usage
from guardsearch.experiments.metrics import newcombe_paired, rate
from guardsearch.experiments.suite import MethodSpec
from guardsearch.models.metered import Metered
from guardsearch.models.spec import model_from_spec

RESULTS = Path(__file__).parent / "results"
LADDER = "ladder:embedded,embedded:1.5b?after=2"
MODELS = {"0.5b": "embedded", "1.5b": "embedded:1.5b", "ladder": LADDER}
BASELINE = "0.5b"


def parse_rows(text: str) -> tuple[int, int, int]:
    """`START:END[:EVERY]` (data-set row indices, ToT's convention)."""
    parts = [int(p) for p in text.split(":")]
    if len(parts) not in (2, 3):
        raise argparse.ArgumentTypeError(f"rows are START:END[:EVERY], got {text!r}")
    return parts[0], parts[1], parts[2] if len(parts) == 3 else 1


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _done(path: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    rows: dict[tuple[str, str, int], dict[str, Any]] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                rows[(row["label"], row["problem"], row["calls_cap"])] = row
    return rows


async def _one(label: str, problem: Any, calls: int) -> dict[str, Any]:
    model = model_from_spec(MODELS[label])
    metered = Metered(model, Budget.of(calls=calls), Trace())
    started = time.perf_counter()
    try:
        out = await suite.run(MethodSpec("astar", "astar"), problem, metered, 0)
    except BudgetExceeded:
        out = {"succeeded": False, "termination": "budget_exhausted"}
    seconds = time.perf_counter() - started
    model_seconds = sum(e.data.get("wall_s", 0.0) for e in metered.trace.of_kind("model_call"))
    return {
        "label": label,
        "spec": MODELS[label],
        "problem": problem.id,
        "numbers": problem.input,
        "calls_cap": calls,
        "succeeded": bool(out["succeeded"]),
        "termination": str(out["termination"]),
        "answer": out.get("answer"),
        "calls": metered.usage.calls,
        "tokens": metered.usage.total_tokens,
        "seconds": round(seconds, 3),
        "model_seconds": round(model_seconds, 3),
        "models": model_usage(metered.trace.events),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
    }


def one(args: argparse.Namespace) -> None:
    """One (model, puzzle) in this process: its row appended to the rows file."""
    if args.cpus:
        # llama.cpp runs one thread per CPU this process may use. On a box loaded past
        # its cores, two spinning threads wait on each other for most of every step;
        # one thread keeps going (the figures say which setting they were taken with).
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[: args.cpus])
    (problem,) = select_row(args.problem)
    row = asyncio.run(_one(args.model, problem, args.calls))
    row["cpus"] = len(os.sched_getaffinity(0))
    with args.rows_file.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")
    print(
        f"{args.model} {problem.id} {row['numbers']}: "
        f"{'solved' if row['succeeded'] else row['termination']} in {row['calls']} "
        f"calls, {row['seconds']:.0f}s",
        flush=True,
    )


def select_row(row: str) -> list[Any]:
    index = int(row)
    return select({"range": f"{index}:{index + 1}"})


def run(args: argparse.Namespace) -> None:
    """Puzzle by puzzle, each model in turn (so a run cut short stays paired), each
    (model, puzzle) in its own process (so its peak RSS is that model's)."""
    start, end, every = args.rows
    problems = select({"range": f"{start}:{end}", "every": every})
    done = _done(args.rows_file)
    began = time.monotonic()
    args.rows_file.parent.mkdir(parents=True, exist_ok=True)
    for problem in problems:
        for label in args.models:
            if (label, problem.id, args.calls) in done:
                continue
            if args.minutes is not None and (time.monotonic() - began) / 60 >= args.minutes:
                print(f"stopping: {args.minutes} minutes used; run again to go on", flush=True)
                return
            command = [sys.executable, __file__, "one", "--model", label]
            command += ["--problem", str(int(problem.id)), "--calls", str(args.calls)]
            command += ["--rows-file", str(args.rows_file), "--cpus", str(args.cpus)]
            subprocess.run(command, check=True)


def _figures(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    calls = sum(r["calls"] for r in rows)
    seconds = sum(r["seconds"] for r in rows)
    solved = sum(r["succeeded"] for r in rows)
    per_model: dict[str, dict[str, Any]] = {}
    for r in rows:
        for name, usage in (r.get("models") or {}).items():
            into = per_model.setdefault(name, {"calls": 0, "seconds": 0.0, "escalations": 0})
            into["calls"] += usage["calls"]
            into["seconds"] = round(into["seconds"] + usage["seconds"], 3)
            into["escalations"] += usage["escalations"]
    return {
        **rate([bool(r["succeeded"]) for r in rows]),
        "calls": calls,
        "mean_calls": calls / len(rows) if rows else 0.0,
        "seconds": round(seconds, 1),
        "seconds_per_call": sum(r["model_seconds"] for r in rows) / calls if calls else 0.0,
        "seconds_per_solved": seconds / solved if solved else None,
        "peak_rss_mb": max((r["peak_rss_mb"] for r in rows), default=0.0),
        "cpus": sorted({int(r.get("cpus", 0)) for r in rows}),
        **({"per_model": per_model} if per_model else {}),
    }


def summarize(rows_file: Path, rows: tuple[int, int, int], calls: int) -> dict[str, Any]:
    start, end, every = rows
    wanted = [p.id for p in select({"range": f"{start}:{end}", "every": every})]
    done = _done(rows_file)
    table: dict[str, Any] = {}
    by_label = {
        label: {pid: done[(label, pid, calls)] for pid in wanted if (label, pid, calls) in done}
        for label in MODELS
    }
    # Paired: only the puzzles every measured model has (a run cut short mid-puzzle
    # leaves one puzzle measured on some models only).
    measured = [set(got) for got in by_label.values() if got]
    complete = set.intersection(*measured) if measured else set()
    by_label = {
        label: {p: r for p, r in got.items() if p in complete} for label, got in by_label.items()
    }
    base = by_label[BASELINE]
    for label, got in by_label.items():
        if not got:
            continue
        figures = _figures(list(got.values()))
        common = sorted(set(got) & set(base))
        if label != BASELINE and common:
            a = [got[p]["succeeded"] for p in common]
            b = [base[p]["succeeded"] for p in common]
            both = sum(x and y for x, y in zip(a, b, strict=True))
            first = sum(x and not y for x, y in zip(a, b, strict=True))
            second = sum(y and not x for x, y in zip(a, b, strict=True))
            delta, low, high = newcombe_paired(
                both, first, second, len(common) - both - first - second
            )
            figures["vs_0.5b"] = {"n": len(common), "delta": delta, "ci_low": low, "ci_high": high}
        table[label] = {"spec": MODELS[label], "problems": sorted(got), **figures}
    return {
        "work": "game24 astar",
        "rows": f"{start}:{end}:{every}",
        "puzzles": len(wanted),
        "calls_cap": calls,
        "sample": every > 1 or (end - start) < 100,
        "models": table,
    }


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def markdown(card: dict[str, Any], command: str, note: str = "") -> str:
    measured = min((m["n"] for m in card["models"].values()), default=0)
    lines = [
        "# Model sizes: 0.5B, 1.5B and the ladder on the same puzzles",
        "",
        f"Game of 24, astar, rows {card['rows']} ({card['puzzles']} puzzles; "
        + (
            "each measured on every model"
            if measured == card["puzzles"]
            else f"{measured} measured for every model so far"
        )
        + f"), at most {card['calls_cap']} calls per puzzle, paired (same puzzles, seeds).",
    ]
    if card["sample"]:
        lines += [
            "",
            "**A sample, not the full table**: ToT's test rows 900–999 are 100 puzzles; this "
            "is every n-th. The intervals are wide accordingly.",
        ]
    if note:
        lines += ["", note]
    lines += [
        "",
        f"Command: `{command}`",
        "",
        "| model | spec | solved | success (95% CI) | Δ vs 0.5B (95% CI, paired) | mean calls "
        "| s / call | s / solved | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, m in card["models"].items():
        vs = m.get("vs_0.5b")
        delta = (
            f"{100 * vs['delta']:+.0f} pts [{100 * vs['ci_low']:+.0f}, {100 * vs['ci_high']:+.0f}]"
            if vs
            else "—"
        )
        per_solved = f"{m['seconds_per_solved']:.0f}" if m["seconds_per_solved"] else "—"
        lines.append(
            f"| {label} | `{m['spec']}` | {m['successes']}/{m['n']} | {_pct(m['success_rate'])} "
            f"[{_pct(m['ci_low'])}, {_pct(m['ci_high'])}] | {delta} | {m['mean_calls']:.1f} | "
            f"{m['seconds_per_call']:.2f} | {per_solved} | {m['peak_rss_mb']:.0f} |"
        )
    ladders = {k: m["per_model"] for k, m in card["models"].items() if m.get("per_model")}
    for label, per_model in ladders.items():
        lines += ["", f"{label}: calls per model", "", "| model | calls | seconds | escalations |"]
        lines.append("|---|---|---|---|")
        for name, u in per_model.items():
            lines.append(f"| {name} | {u['calls']} | {u['seconds']:.0f} | {u['escalations']} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "one", "summary"):
        p = sub.add_parser(name)
        p.add_argument("--rows", type=parse_rows, default=(900, 1000, 1), help="START:END[:EVERY]")
        p.add_argument("--calls", type=int, default=60, help="call cap per puzzle")
        p.add_argument("--rows-file", type=Path, default=RESULTS / "model_sizes_rows.jsonl")
        if name in ("run", "one"):
            p.add_argument("--cpus", type=int, default=0, help="pin each run to N CPUs (0: all)")
        if name == "run":
            p.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
            p.add_argument("--minutes", type=float, help="stop after this long (default: no limit)")
        elif name == "one":
            p.add_argument("--model", choices=list(MODELS), required=True)
            p.add_argument("--problem", required=True, help="a data-set row index")
        else:
            p.add_argument("--out", type=Path, default=RESULTS / "model_sizes")
            p.add_argument("--note", default="", help="a paragraph for the Markdown")
    args = parser.parse_args(argv)
    if args.command in ("run", "one"):
        (run if args.command == "run" else one)(args)
        return 0
    card = summarize(args.rows_file, args.rows, args.calls)
    start, end, every = args.rows
    cpus = sorted({c for m in card["models"].values() for c in m["cpus"]})
    pinned = f" --cpus {cpus[0]}" if len(cpus) == 1 and cpus[0] else ""
    command = (
        f"python3 benchmarks/model_sizes.py run --rows {start}:{end}:{every} "
        f"--calls {args.calls}{pinned} (under flock /tmp/gs-model.lock, in pieces), then "
        f"python3 benchmarks/model_sizes.py summary --rows {start}:{end}:{every}"
    )
    card["command"] = command
    card["note"] = args.note
    text = markdown(card, command, args.note)
    args.out.with_suffix(".json").write_text(json.dumps(card, indent=1) + "\n", "utf-8")
    args.out.with_suffix(".md").write_text(text, "utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
