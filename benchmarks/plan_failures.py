"""What a plan-bench run's failed trials spent their calls on, from its stored traces.

    python benchmarks/plan_failures.py RUN_DIR [--method search]

For each failed trial of the method: the termination, calls, whether `single` solved
the same problem, the plan guard's rejections by kind (the feedback's first word),
the upstream steps' rejections, and the outputs dropped as repeats, by step. Prints
Markdown; reads `trials.jsonl` and `traces.jsonl.gz` of RUN_DIR (the last record per
key counts, as the harness does).
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any


def _last(path: Path) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            rows[record["key"]] = record
    return rows


def failures(run: Path, method: str) -> list[str]:
    trials = _last(run / "trials.jsonl")
    events: dict[str, list[dict[str, Any]]] = {}
    with gzip.open(run / "traces.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            events[record["key"]] = record["events"]
    single = {r["problem"]: r["succeeded"] for r in trials.values() if r["method"] == "single"}
    lines = [
        "| problem | termination | calls | single solved | plan rejections by kind "
        "| upstream rejections | repeats by step |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, r in sorted(trials.items(), key=lambda kv: kv[1]["problem"]):
        if r["method"] != method or r["succeeded"]:
            continue
        mine = events.get(key, [])
        verdicts = [e for e in mine if e["kind"] == "guard_verdict" and not e["data"]["passed"]]
        plans = Counter(
            str(e["data"]["feedback"]).split(" ")[0].rstrip(":")
            for e in verdicts
            if e["step"] == "plan"
        )
        upstream = Counter(e["step"] for e in verdicts if e["step"] != "plan")
        repeats = Counter(
            e["step"]
            for e in mine
            if e["kind"] == "candidate_dropped" and e["data"].get("reason") == "duplicate"
        )
        show = lambda c: ", ".join(f"{k} {v}" for k, v in c.most_common()) or "—"  # noqa: E731
        lines.append(
            f"| {r['problem']} | {r['termination']} | {r['calls']} | "
            f"{'yes' if single.get(r['problem']) else 'no'} | {show(plans)} | {show(upstream)} "
            f"| {show(repeats)} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--method", default="search")
    args = parser.parse_args()
    print("\n".join(failures(args.run, args.method)))


if __name__ == "__main__":
    main()
