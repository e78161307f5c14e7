"""Paired comparisons between plan-bench runs, split by category halves (issue 16).

    python benchmarks/plan_pairs.py NEW_DIR [--before OLD_DIR] [--budget 30]

Reads `trials.jsonl` of each run directory (the last record per key counts, as the
harness does) and prints Markdown: per pipeline the pass rate at the budget with its
Wilson interval, and paired differences (Newcombe's method 10 for paired proportions)
— within the new run (search vs single, search vs search-blind, search-blind vs single)
and, with `--before`, each pipeline of the new run against the same pipeline of the
old one — over all problems, the tuning half (bug_fix, feature: the categories the
changes were developed on) and the held-out half (refactor, data_migration,
operations_runbook).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from guardsearch.experiments.metrics import newcombe_paired, wilson

TUNE = ("bug_fix", "feature")
HALVES = {
    "all": None,
    "tuning half (bug_fix, feature)": TUNE,
    "held-out half (refactor, data_migration, operations_runbook)": "held",
}
PAIRS = (("search", "single"), ("search", "search-blind"), ("search-blind", "single"))


def load(directory: Path, budget: int) -> dict[str, dict[str, tuple[bool, str]]]:
    """method -> problem -> (solved within `budget` calls, category)."""
    rows: dict[str, dict[str, Any]] = {}
    for line in (directory / "trials.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            rows[record["key"]] = record
    out: dict[str, dict[str, tuple[bool, str]]] = {}
    for r in rows.values():
        solved = bool(r["succeeded"]) and int(r["calls"]) <= budget
        category = (r.get("detail") or {}).get("category", "?")
        out.setdefault(r["method"], {})[r["problem"]] = (solved, category)
    return out


def _keep(category: str, half: object) -> bool:
    if half is None:
        return True
    if half == "held":
        return category not in TUNE
    return category in half  # type: ignore[operator]


def paired(a: dict[str, tuple[bool, str]], b: dict[str, tuple[bool, str]], half: object) -> str:
    problems = [p for p in a if p in b and _keep(a[p][1], half)]
    both = sum(a[p][0] and b[p][0] for p in problems)
    first = sum(a[p][0] and not b[p][0] for p in problems)
    second = sum(b[p][0] and not a[p][0] for p in problems)
    neither = len(problems) - both - first - second
    d, low, high = newcombe_paired(both, first, second, neither)
    return (
        f"{100 * d:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}] "
        f"(n {len(problems)}, only first {first}, only second {second})"
    )


def rate(runs: dict[str, tuple[bool, str]], half: object) -> str:
    picked = [s for s, c in runs.values() if _keep(c, half)]
    solved, n = sum(picked), len(picked)
    low, high = wilson(solved, n)
    share = 100 * solved / max(1, n)
    return f"{solved}/{n} = {share:.1f}% [{100 * low:.0f}, {100 * high:.0f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("new", type=Path)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--budget", type=int, default=30)
    args = parser.parse_args()
    new = load(args.new, args.budget)
    old = load(args.before, args.budget) if args.before else {}
    for title, half in HALVES.items():
        print(f"\n### {title}, budget {args.budget}\n")
        print("| pipeline | new | before |\n|---|---|---|")
        for method in new:
            before = rate(old[method], half) if method in old else "—"
            print(f"| {method} | {rate(new[method], half)} | {before} |")
        print("\n| paired difference (pts, 95% CI) | |\n|---|---|")
        for a, b in PAIRS:
            if a in new and b in new:
                print(f"| {a} − {b} (new run) | {paired(new[a], new[b], half)} |")
        for method in new:
            if method in old:
                print(f"| {method}: new − before | {paired(new[method], old[method], half)} |")


if __name__ == "__main__":
    main()
