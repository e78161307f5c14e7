"""The research row of the size table (issue 17): one question set, several models, paired.

    python benchmarks/research_models.py 0.5b=benchmarks/results/research_fresh.json \\
        1.5b=benchmarks/results/research_fresh_15b.json \\
        ladder=benchmarks/results/research_fresh_ladder.json

Each file is a `research_eval.py` report of the same questions run with another
`--model`. Printed as Markdown: per model the accuracy with its 95% Wilson interval,
the paired difference against the first model (Newcombe's method 10), model calls,
tokens and seconds per question, and the synthesis steering counts.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from guardsearch.experiments.metrics import newcombe_paired, wilson


def load(path: Path) -> dict[str, Any]:
    report = json.loads(path.read_text(encoding="utf-8"))
    report["by_question"] = {r["question"]: r for r in report["rows"]}
    return report


def table(reports: dict[str, dict[str, Any]]) -> str:
    labels = list(reports)
    base = reports[labels[0]]["by_question"]
    shared = [q for q in base if all(q in r["by_question"] for r in reports.values())]
    if not shared:
        raise SystemExit("the reports share no question")
    n = len(shared)
    lines = [
        f"Paired on {n} questions; Δ is against `{labels[0]}`.",
        "",
        "| model | spec | correct | accuracy (95% Wilson) | Δ (95%, paired) "
        "| calls / q | tokens / q | s / q | synthesis outputs / repeats / repairs |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, report in reports.items():
        rows = report["by_question"]
        right = [bool(rows[q]["correct"]) for q in shared]
        lo, hi = wilson(sum(right), n)
        if label == labels[0]:
            delta = "—"
        else:
            first = [bool(base[q]["correct"]) for q in shared]
            pairs = Counter(zip(right, first, strict=True))
            d, dlo, dhi = newcombe_paired(
                pairs[(True, True)], pairs[(True, False)], pairs[(False, True)],
                pairs[(False, False)],
            )  # fmt: skip
            delta = f"{d * 100:+.1f} [{dlo * 100:+.1f}, {dhi * 100:+.1f}]"
        steer: Counter[str] = Counter()
        for q in shared:
            steer.update(rows[q].get("synthesize_steering") or {})
        calls = sum(rows[q].get("calls", 0) for q in shared) / n
        tokens = sum(rows[q].get("tokens", 0) for q in shared) / n
        seconds = sum(rows[q].get("seconds", 0.0) for q in shared) / n
        lines.append(
            f"| {label} | `{report.get('model', '?')}` | {sum(right)}/{n} | "
            f"{sum(right) / n:.0%} [{lo:.0%}, {hi:.0%}] | {delta} | {calls:.2f} | "
            f"{tokens:.0f} | {seconds:.1f} | "
            f"{steer['outputs']} / {steer['repeats']} / {steer['repairs']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("reports", nargs="+", metavar="LABEL=REPORT.json")
    parser.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    parser.add_argument("--title", default="Research per model", help="the file's heading")
    args = parser.parse_args()
    reports = {}
    for item in args.reports:
        label, _, path = item.partition("=")
        if not path:
            raise SystemExit(f"expected LABEL=REPORT.json, got {item!r}")
        reports[label] = load(Path(path))
    text = table(reports)
    print(text)
    if args.out:
        command = "python3 benchmarks/research_models.py " + " ".join(args.reports)
        args.out.write_text(f"# {args.title}\n\n`{command}`\n\n{text}\n", encoding="utf-8")


if __name__ == "__main__":
    main()
