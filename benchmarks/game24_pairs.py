"""Game of 24 runs of one method, combined and paired with an earlier run (issue 16).

    python benchmarks/game24_pairs.py RUN_DIR [RUN_DIR ...] [--before OLD_DIR]
        [--method astar] [--budget 60] [--json OUT.json]

Reads `trials.jsonl` of each run directory (the last record per key counts, as the
harness does; a run split into pieces is passed as its pieces' directories) and prints
Markdown: the method's pass rate within `--budget` calls with its Wilson interval,
calls (mean, median, of the solved), terminations, steering (outputs, repeats and
their share, repairs, failures prevented), and, with `--before`, the paired
difference against the same method in the earlier run on the puzzles both ran
(Newcombe's method 10 for paired proportions). `--json` also writes those figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from guardsearch.core.steering import Steering
from guardsearch.experiments.metrics import newcombe_paired, wilson


def load(directories: list[Path], method: str) -> dict[str, dict[str, Any]]:
    """problem -> its trial record for `method` (the last one per key, in the order given)."""
    rows: dict[str, dict[str, Any]] = {}
    for directory in directories:
        for line in (directory / "trials.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                if record.get("method") == method:
                    rows[record["key"]] = record
    return {r["problem"]: r for r in rows.values()}


def solved(record: dict[str, Any], budget: int) -> bool:
    return bool(record["succeeded"]) and int(record["calls"]) <= budget


def summary(runs: dict[str, dict[str, Any]], budget: int) -> dict[str, Any]:
    """Pass rate, calls, terminations and steering of one method's trials."""
    wins = [p for p, r in runs.items() if solved(r, budget)]
    n = len(runs)
    low, high = wilson(len(wins), n)
    calls = [int(r["calls"]) for r in runs.values()]
    won_calls = [int(runs[p]["calls"]) for p in wins]
    steering = sum((Steering.from_dict(r.get("steering")) for r in runs.values()), Steering())
    return {
        "n": n,
        "solved": len(wins),
        "rate": len(wins) / n if n else 0.0,
        "wilson95": [low, high],
        "mean_calls": statistics.fmean(calls) if calls else 0.0,
        "median_calls_solved": statistics.median(won_calls) if won_calls else None,
        "mean_seconds": statistics.fmean(float(r["seconds"]) for r in runs.values()) if n else 0,
        "terminations": dict(sorted(Counter(r["termination"] for r in runs.values()).items())),
        "steering": steering.as_dict(),
    }


def paired(
    new: dict[str, dict[str, Any]], old: dict[str, dict[str, Any]], budget: int
) -> dict[str, Any]:
    """new − old on the puzzles both ran: counts and Newcombe's paired interval."""
    problems = sorted(p for p in new if p in old)
    a = {p: solved(new[p], budget) for p in problems}
    b = {p: solved(old[p], budget) for p in problems}
    both = sum(a[p] and b[p] for p in problems)
    only_new = sum(a[p] and not b[p] for p in problems)
    only_old = sum(b[p] and not a[p] for p in problems)
    neither = len(problems) - both - only_new - only_old
    d, low, high = newcombe_paired(both, only_new, only_old, neither)
    return {
        "n": len(problems),
        "solved_new": both + only_new,
        "solved_before": both + only_old,
        "only_new": only_new,
        "only_before": only_old,
        "delta": d,
        "newcombe95": [low, high],
    }


def markdown(figures: dict[str, Any]) -> str:
    s = figures["run"]
    low, high = s["wilson95"]
    st = s["steering"]
    lines = [
        "| method | n | solved | success (95% Wilson CI) | mean calls | median calls "
        "(solved) | s / puzzle | terminations |",
        "|---|---|---|---|---|---|---|---|",
        f"| {figures['method']} | {s['n']} | {s['solved']} | {100 * s['rate']:.1f}% "
        f"[{100 * low:.1f}%, {100 * high:.1f}%] | {s['mean_calls']:.1f} | "
        f"{s['median_calls_solved']} | {s['mean_seconds']:.1f} | "
        + ", ".join(f"{k} {v}" for k, v in s["terminations"].items())
        + " |",
        "",
        f"Steering: {st['outputs']:,} outputs judged or dropped, {st['repeats']:,} repeats "
        f"({100 * st['repeat_share']:.1f}%), {st['repairs']:,} repairs, "
        f"{st['prevented']:,} failures prevented by constraints.",
    ]
    if "paired" in figures:
        p = figures["paired"]
        lo, hi = p["newcombe95"]
        lines += [
            "",
            f"Paired with {figures['before']} ({figures['method']}, same puzzles, "
            f"≤ {figures['budget']} calls): n {p['n']}, solved {p['solved_new']} vs "
            f"{p['solved_before']} (only new {p['only_new']}, only before "
            f"{p['only_before']}): **{100 * p['delta']:+.1f} pts** "
            f"[{100 * lo:+.1f}, {100 * hi:+.1f}] (Newcombe, paired).",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--before", type=Path)
    parser.add_argument("--method", default="astar")
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--json", type=Path, dest="json_out")
    args = parser.parse_args()
    new = load(args.runs, args.method)
    figures: dict[str, Any] = {
        "method": args.method,
        "budget": args.budget,
        "runs": [str(d) for d in args.runs],
        "problems": sorted(new),
        "run": summary(new, args.budget),
    }
    if args.before:
        old = load([args.before], args.method)
        figures["before"] = str(args.before)
        figures["before_run"] = summary({p: old[p] for p in new if p in old}, args.budget)
        figures["paired"] = paired(new, old, args.budget)
    print(markdown(figures))
    if args.json_out:
        args.json_out.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
