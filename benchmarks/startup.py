"""How long `guardsearch --version` and `guardsearch --help` take, from process start to exit.

    python3 benchmarks/startup.py [--runs 30] [--src DIR ...] [--out benchmarks/results/startup]

Like hyperfine: each command is run `--runs` times as a fresh process (subprocess, output
discarded), the commands taking turns so that a change in the machine's load falls on
all of them alike, after `--warmup` untimed runs each. Reported per command: the median
(the figure), the 10th and 90th percentiles and the fastest run, all in seconds. Two
reference lines say what no code of ours can go below: `python -c pass` (the
interpreter) and `python -c "import typer"` (the CLI library).

`--src DIR` (repeatable) times the code under DIR (it becomes PYTHONPATH) instead of the
installed package, e.g. `--src /path/to/old/src --src src` for a before/after on one
machine, in the same alternating turns. The console script is the `guardsearch` next to
this interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path


def console_script() -> str:
    """The `guardsearch` entry point of this interpreter (not a shell shim around it)."""
    path = Path(sysconfig.get_path("scripts")) / "guardsearch"
    if not path.is_file():
        raise SystemExit(f"no console script at {path}: pip install -e . first")
    return str(path)


def commands(sources: list[str]) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Label -> (argv, environment) of every command to time."""
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    script = console_script()
    found: dict[str, tuple[list[str], dict[str, str]]] = {
        "python -c pass": ([sys.executable, "-c", "pass"], base),
        "python -c 'import typer'": ([sys.executable, "-c", "import typer"], base),
    }
    for src in sources or [""]:
        env = {**base, "PYTHONPATH": str(Path(src).resolve())} if src else base
        where = f" [{src}]" if src else ""
        for args in (["--version"], ["--help"]):
            found[f"guardsearch {args[0]}{where}"] = ([script, *args], env)
    return found


def timed(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def measure(runs: int, warmup: int, sources: list[str]) -> dict[str, dict[str, float]]:
    todo = commands(sources)
    for argv, env in todo.values():
        for _ in range(warmup):
            timed(argv, env)
    seconds: dict[str, list[float]] = {label: [] for label in todo}
    for _ in range(runs):  # alternating turns
        for label, (argv, env) in todo.items():
            seconds[label].append(timed(argv, env))
    out = {}
    for label, values in seconds.items():
        deciles = statistics.quantiles(values, n=10)
        out[label] = {
            "median": round(statistics.median(values), 3),
            "p10": round(deciles[0], 3),
            "p90": round(deciles[-1], 3),
            "min": round(min(values), 3),
            "runs": len(values),
        }
    return out


def report(figures: dict[str, dict[str, float]], args: argparse.Namespace) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# Start-up: `guardsearch --version` and `--help`",
        "",
        f"Command: `python3 benchmarks/startup.py --runs {args.runs} --warmup {args.warmup}"
        + "".join(f" --src {s}" for s in args.src)
        + (f" --out {args.out}`" if args.out else "`"),
        "",
        f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load average {load:.1f} when it ended (shared with other jobs). Seconds from "
        "process start to exit, each command a fresh process, the commands in turns.",
        "",
        "| command | median | p10 | p90 | fastest |",
        "|---|---|---|---|---|",
    ]
    for label, f in figures.items():
        cells = f"**{f['median']:.3f}** | {f['p10']:.3f} | {f['p90']:.3f} | {f['min']:.3f}"
        lines.append(f"| `{label}` | {cells} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--src", action="append", default=[], help="time the code under DIR")
    parser.add_argument("--out", help="write OUT.md and OUT.json")
    args = parser.parse_args()
    figures = measure(args.runs, args.warmup, args.src)
    text = report(figures, args)
    sys.stdout.write(text)
    if args.out:
        Path(f"{args.out}.md").write_text(text, encoding="utf-8")
        Path(f"{args.out}.json").write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
