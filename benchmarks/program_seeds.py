"""Programs the model writes, from scratch on several seeds, with and without feedback.

    python3 benchmarks/program_seeds.py --model embedded:1.5b --seeds 0-4 --rows 0:100 \
        --out benchmarks/results/program_seeds

Runs `benchmarks/program_bench.py` once per seed and per feedback mode (test feedback,
then a bare "try again": `--no-feedback`), each from a fresh code cache under a budget
of `--calls` model calls, and writes one JSON and one compressed trace per run into
`--out`, then `summary.md`: per seed, whether an accepted program came within the
budget, the calls it took, and the puzzles of `--rows` it solved, paired by seed (what
guard feedback is worth). Runs that are already in `--out` are read, not run again.
The runs take `--lock` (the team's one-model-at-a-time lock) themselves, a few runs per
turn: the lock is let go before a run that could end after `--hold` seconds of holding
it (a run spends at most `--calls` calls, estimated at `--call-seconds` each).
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import model_lock


class Turns:
    """The lock file `path`, taken for a turn of at most `hold` seconds: `before(cost)`
    lets it go and takes it again when `cost` more seconds would overrun the turn."""

    def __init__(self, path: str, hold: float) -> None:
        self.path, self.hold = path, hold
        self.handle: IO[str] | None = None
        self.since = 0.0

    def before(self, cost: float) -> None:
        if not self.path:
            return
        if self.handle is not None and time.monotonic() - self.since + cost > self.hold:
            self.release()
        if self.handle is None:
            self.handle = model_lock.take(self.path)
            self.since = time.monotonic()

    def release(self) -> None:
        if self.handle is not None:
            model_lock.release(self.handle)
            self.handle = None


def seeds_of(text: str) -> list[int]:
    if "-" in text:
        low, high = (int(x) for x in text.split("-"))
        return list(range(low, high + 1))
    return [int(x) for x in text.split(",")]


def run_one(args: argparse.Namespace, seed: int, feedback: bool, turns: Turns) -> dict[str, Any]:
    name = f"{args.domain}_s{seed}_{'feedback' if feedback else 'bare'}"
    out = Path(args.out) / f"{name}.json"
    if not out.exists():
        turns.before(args.calls * args.call_seconds)
        command = [sys.executable, str(Path(__file__).with_name("program_bench.py")),
                   "--model", args.model, "--domain", args.domain, "--seed", str(seed),
                   "--calls", str(args.calls), "--rows", args.rows, "--out", str(out),
                   "--trace", str(out.with_suffix(".jsonl.gz")), "--lock", ""]  # fmt: skip
        if not feedback:
            command.append("--no-feedback")
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        out.with_suffix(".md").unlink(missing_ok=True)  # the summary says it
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def accepted(report: dict[str, Any]) -> bool:
    """Whether every function was accepted: the code ran and solved a problem."""
    return int(report["solved"]) > 0


def summary(args: argparse.Namespace, runs: dict[tuple[int, bool], dict[str, Any]]) -> str:
    lines = ["| seed | feedback: accepted | calls | solved | bare: accepted | calls | solved |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for seed in seeds_of(args.seeds):
        cells = [str(seed)]
        for feedback in (True, False):
            r = runs[(seed, feedback)]
            cells += ["yes" if accepted(r) else "no", str(r["calls"]),
                      f"{r['solved']} / {r['puzzles']}"]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    total = {f: sum(accepted(runs[(s, f)]) for s in seeds_of(args.seeds)) for f in (True, False)}
    n = len(seeds_of(args.seeds))
    command = shlex.join(["python3", "benchmarks/program_seeds.py", *sys.argv[1:]])
    return (
        f"# Programs the model writes: {args.domain} on {args.model}, {n} seeds\n\n"
        f"Command: `{command}`\n\nEach run from scratch (fresh code cache), at most "
        f"{args.calls} model calls for rows {args.rows}; 'calls' are the model calls of the "
        "whole set (writing the code, and writing a function again after a search-time "
        "fault), 'solved' the problems solved by the accepted program, each answer "
        "checked; 'accepted' means the program solved at least one problem.\n\n"
        + "\n".join(lines)
        + f"\n\nAccepted within {args.calls} calls: {total[True]} of {n} with test feedback, "
        f'{total[False]} of {n} with a bare "try again".\n'
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="embedded:1.5b")
    parser.add_argument("--domain", choices=["game24", "blocks"], default="game24")
    parser.add_argument("--seeds", default="0-4", help="'0-4' or '0,2,3'")
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rows", default="0:100")
    parser.add_argument("--out", default="benchmarks/results/program_seeds")
    parser.add_argument("--lock", default="/tmp/gs-model.lock", help="'' for no lock")
    parser.add_argument("--hold", type=float, default=840.0, help="seconds per turn of the lock")
    parser.add_argument("--call-seconds", type=float, default=25.0)
    args = parser.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    runs = {}
    turns = Turns(args.lock, args.hold)
    for seed in seeds_of(args.seeds):
        for feedback in (True, False):
            runs[(seed, feedback)] = run_one(args, seed, feedback, turns)
            print(f"seed {seed} feedback={feedback}: solved {runs[(seed, feedback)]['solved']}",
                  file=sys.stderr)  # fmt: skip
    turns.release()
    (Path(args.out) / "summary.md").write_text(summary(args, runs))


if __name__ == "__main__":
    main()
