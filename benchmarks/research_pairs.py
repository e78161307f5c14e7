"""Paired comparison of two research_eval reports on the same questions (issue 16).

    python benchmarks/research_pairs.py AFTER.json --before BEFORE.json

Matches rows by question, and prints Markdown: each report's accuracy with its 95%
Wilson interval, the paired difference (after − before, Newcombe's method 10 for
paired proportions), the synthesis steering counts and the error kinds of each.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from guardsearch.experiments.metrics import newcombe_paired, wilson


def load(path: Path) -> dict[str, dict[str, Any]]:
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    return {r["question"]: r for r in rows}


def outcome(row: dict[str, Any]) -> str:
    if row.get("error"):
        message = row.get("message", "")
        reason = message.split("last feedback:", 1)[-1].strip()[:60] if message else ""
        return f"{row['error']}: {reason}" if reason else row["error"]
    return "correct" if row["correct"] else "wrong answer"


def report(after: Path, before: Path) -> str:
    new, old = load(after), load(before)
    shared = [q for q in new if q in old]
    if not shared:
        raise SystemExit("the two reports share no question")
    pairs = Counter((bool(old[q]["correct"]), bool(new[q]["correct"])) for q in shared)
    n = len(shared)
    delta, low, high = newcombe_paired(
        pairs[(True, True)], pairs[(False, True)], pairs[(True, False)], pairs[(False, False)]
    )
    lines = [f"Paired on {n} questions: `{after.name}` against `{before.name}`.", ""]
    lines += [
        "| report | correct | accuracy (95% Wilson) | synthesis outputs / repeats / repairs |"
    ]
    lines += ["|---|---|---|---|"]
    for name, rows in (("before", old), ("after", new)):
        right = sum(bool(rows[q]["correct"]) for q in shared)
        lo, hi = wilson(right, n)
        steer = Counter()
        for q in shared:
            steer.update(rows[q].get("synthesize_steering") or {})
        lines.append(
            f"| {name} | {right}/{n} | {right / n:.0%} [{lo:.0%}, {hi:.0%}] | "
            f"{steer['outputs']} / {steer['repeats']} / {steer['repairs']} |"
        )
    lines += [
        "",
        f"After − before: **{delta * 100:+.1f} points [{low * 100:+.1f}, {high * 100:+.1f}]** "
        f"(only after {pairs[(False, True)]}, only before {pairs[(True, False)]}).",
        "",
        "| outcome | before | after |",
        "|---|---|---|",
    ]
    kinds_old = Counter(outcome(old[q]) for q in shared)
    kinds_new = Counter(outcome(new[q]) for q in shared)
    for kind in sorted(set(kinds_old) | set(kinds_new), key=lambda k: -kinds_old[k] - kinds_new[k]):
        lines.append(f"| {kind} | {kinds_old[kind]} | {kinds_new[kind]} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("after", type=Path)
    parser.add_argument("--before", type=Path, required=True)
    args = parser.parse_args()
    print(report(args.after, args.before))


if __name__ == "__main__":
    main()
