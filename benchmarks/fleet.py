"""The run fleet's throughput: 40 queued scripted durable runs on 1 vs 2 Ray workers.

    python3 benchmarks/fleet.py --pg DSN [--runs 40] [--rounds 3] [--delays 0,0.02] \\
        [--out benchmarks/results/fleet]

One local Ray with 2 CPUs executes `--runs` durable runs that wait in a fresh
PostgreSQL database as `created`, once with one run at a time (each task reserves both
CPUs: one worker process works) and once with two (two worker processes), in
`--rounds` rounds that alternate the order; medians are reported. The runs are the
fleet tests' app (tests/unit/store/fleet_apps.py: four strategies in turn, 10 to 112
model calls a run) on the scripted model, with no bound per endpoint. The worker
processes are started (each imports guardsearch once) before anything is timed; the
time is from the first submission to the last run's end, and every run must end
`succeeded`.

A model delay of 0 measures the fleet's own work (Python, the store round trips); a
delay stands for a model served elsewhere (each call waits, the worker's CPU idles).
The load average before each measurement is recorded: on a shared box the figures
move with it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import uuid
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

HERE = Path(__file__).resolve().parent
APPS = HERE.parent / "tests" / "unit" / "store"
sys.path.insert(0, str(APPS))

from fleet_apps import answers_file, problems  # noqa: E402

from guardsearch.runs import RunSpec, create_run  # noqa: E402
from guardsearch.runs.fleet import RayFleet  # noqa: E402
from guardsearch.store.base import RunRecord  # noqa: E402
from guardsearch.store.open import open_store  # noqa: E402

STRATEGIES = ("beam", "astar", "bfs", "dfs")


def fresh_database(dsn: str) -> str:
    import psycopg

    name = f"fleet_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(dsn)._replace(path=f"/{name}"))


def queue(url: str, model: str, count: int, offset: int = 0) -> list[str]:
    store = open_store(url)
    try:
        return [
            create_run(
                RunSpec(
                    app="fleet_apps:build",
                    problem=p,
                    strategy=STRATEGIES[(i + offset) % 4],
                    model=model,
                    budget={"calls": 300},
                ),
                store,
            ).id
            for i, p in enumerate(problems(count))
        ]
    finally:
        store.close()


def start_ray(workers: int) -> None:
    import ray

    path = os.pathsep.join(filter(None, [str(APPS), os.environ.get("PYTHONPATH")]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ray.init(
            num_cpus=workers,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"PYTHONPATH": path}},
        )


def measure(url: str, workers: int, model: str, runs: int) -> dict[str, Any]:
    """`runs` queued runs with at most `workers` at once: each task reserves 2 / workers
    of the cluster's 2 CPUs, so one worker process or two run at a time."""
    fleet = RayFleet(per_endpoint=runs, cpus=2 / workers)
    ids = queue(url, model, runs)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    records = fleet.execute_all(url, ids)
    seconds = time.perf_counter() - start
    failed = [r for r in records if not (isinstance(r, RunRecord) and r.status == "succeeded")]
    if failed:
        raise SystemExit(f"{len(failed)} run(s) did not succeed: {failed[:3]}")
    return {
        "workers": workers,
        "runs": runs,
        "calls": sum(r.calls for r in records if isinstance(r, RunRecord)),
        "seconds": round(seconds, 2),
        "runs_per_s": round(runs / seconds, 3),
        "load_before": round(load, 2),
    }


def report(rows: list[dict[str, Any]], reps: int) -> str:
    runs = rows[0]["runs"]
    lines = [
        "# Run fleet throughput (benchmarks/fleet.py)",
        "",
        f"{runs} queued durable runs of the fleet tests' scripted app on one local Ray "
        f"(2 CPUs) running 1 or 2 of them at once (one worker process or two), PostgreSQL "
        f"on localhost; {reps} rounds, 1 and 2 workers alternating; medians. "
        f"{platform.node()}: {os.cpu_count()} cores shared with other engineers' jobs "
        "(the load average before each measurement is in fleet.json).",
        "",
        "| model delay | workers | model calls | median seconds | median runs/s "
        "| median load before |",
        "|---|---|---|---|---|---|",
    ]
    for delay in sorted({r["delay_s"] for r in rows}):
        for workers in (1, 2):
            got = [r for r in rows if r["delay_s"] == delay and r["workers"] == workers]
            lines.append(
                f"| {delay} s | {workers} | {got[0]['calls']} | "
                f"{statistics.median(r['seconds'] for r in got):.2f} | "
                f"{statistics.median(r['runs_per_s'] for r in got):.3f} | "
                f"{statistics.median(r['load_before'] for r in got):.1f} |"
            )
    lines.append("")
    for delay in sorted({r["delay_s"] for r in rows}):
        ratios = []
        for rep in range(reps):
            by = {r["workers"]: r for r in rows if r["delay_s"] == delay and r["rep"] == rep}
            ratios.append(by[2]["runs_per_s"] / by[1]["runs_per_s"])
        shown = ", ".join(f"{x:.2f}" for x in ratios)
        lines.append(
            f"- delay {delay} s: 2 workers / 1 worker = **{statistics.median(ratios):.2f}x** "
            f"throughput (median of the rounds: {shown})"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg", required=True, help="a PostgreSQL DSN (a database is created)")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--delays", default="0,0.02", help="scripted model delays, seconds")
    parser.add_argument("--out", help="write OUT.json and OUT.md")
    args = parser.parse_args()
    import ray

    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"gs-fleet-bench-{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    url = fresh_database(args.pg)
    delays = [float(d) for d in args.delays.split(",")]
    start_ray(2)
    rows = []
    try:
        model = f"scripted:{answers_file(folder)}?delay=0"
        RayFleet(per_endpoint=4).execute_all(url, queue(url, model, 4))  # start the workers
        for rep in range(args.rounds):
            for delay in delays:
                model = f"scripted:{answers_file(folder)}?delay={delay}"
                for workers in (1, 2) if rep % 2 == 0 else (2, 1):
                    row = {"rep": rep, "delay_s": delay, **measure(url, workers, model, args.runs)}
                    print(json.dumps(row), flush=True)
                    rows.append(row)
    finally:
        ray.shutdown()
    text = report(rows, args.rounds)
    print(text)
    if args.out:
        Path(f"{args.out}.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
        Path(f"{args.out}.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
