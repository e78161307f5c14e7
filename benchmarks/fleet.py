"""The run fleet's throughput: 40 queued scripted durable runs on 1 vs 2 Ray workers.

    python3 benchmarks/fleet.py --pg DSN [--runs 40] [--delays 0,0.02] \
        [--out benchmarks/results/fleet]

For each model delay and each worker count, a fresh local Ray with that many CPUs
(one run per worker process at a time) executes `--runs` durable runs that wait in a
fresh PostgreSQL database as `created`: the fleet tests' app (tests/unit/store/
fleet_apps.py: four strategies in turn, 10 to 112 model calls a run) on the scripted
model, with no bound per endpoint. Before timing, a warm-up run per worker starts the
worker processes (each imports guardsearch once). The time is from the first
submission to the last run's end; every run must end `succeeded`.

A model delay of 0 measures the fleet's own work (Python, the store round trips);
a delay stands for a model served elsewhere (each call waits, the worker's CPU idles).
The machine's load average is recorded: on a shared box the figures move with it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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


def measure(dsn: str, workers: int, delay: float, runs: int, folder: Path) -> dict[str, Any]:
    import ray

    url = fresh_database(dsn)
    model = f"scripted:{answers_file(folder)}?delay={delay}"
    path = os.pathsep.join(filter(None, [str(APPS), os.environ.get("PYTHONPATH")]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ray.init(
            num_cpus=workers,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"PYTHONPATH": path}},
        )
    try:
        fleet = RayFleet(per_endpoint=runs)
        fleet.execute_all(url, queue(url, model, workers))  # start the worker processes
        ids = queue(url, model, runs)
        load = os.getloadavg()[0]
        start = time.perf_counter()
        records = fleet.execute_all(url, ids)
        seconds = time.perf_counter() - start
    finally:
        ray.shutdown()
    failed = [r for r in records if not (isinstance(r, RunRecord) and r.status == "succeeded")]
    if failed:
        raise SystemExit(f"{len(failed)} run(s) did not succeed: {failed[:3]}")
    calls = sum(r.calls for r in records if isinstance(r, RunRecord))
    return {
        "workers": workers,
        "delay_s": delay,
        "runs": runs,
        "calls": calls,
        "seconds": round(seconds, 2),
        "runs_per_s": round(runs / seconds, 3),
        "load_before": round(load, 2),
    }


def report(rows: list[dict[str, Any]]) -> str:
    lines = [
        "# Run fleet throughput (benchmarks/fleet.py)",
        "",
        f"{rows[0]['runs']} queued durable runs of the fleet tests' scripted app on a local "
        f"Ray with 1 or 2 worker processes, PostgreSQL on localhost; {platform.node()} "
        f"({os.cpu_count()} cores, shared with other engineers' jobs: see the load).",
        "",
        "| model delay | workers | model calls | seconds | runs/s | load average before |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['delay_s']} s | {r['workers']} | {r['calls']} | {r['seconds']} | "
            f"{r['runs_per_s']} | {r['load_before']} |"
        )
    lines.append("")
    for delay in sorted({r["delay_s"] for r in rows}):
        by = {r["workers"]: r for r in rows if r["delay_s"] == delay}
        if 1 in by and 2 in by:
            ratio = by[2]["runs_per_s"] / by[1]["runs_per_s"]
            lines.append(f"- delay {delay} s: 2 workers / 1 worker = **{ratio:.2f}x** throughput")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg", required=True, help="a PostgreSQL DSN (a database is created)")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--delays", default="0,0.02", help="scripted model delays, seconds")
    parser.add_argument("--out", help="write OUT.json and OUT.md")
    args = parser.parse_args()
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"gs-fleet-bench-{os.getpid()}"
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for delay in (float(d) for d in args.delays.split(",")):
        for workers in (1, 2):
            row = measure(args.pg, workers, delay, args.runs, folder)
            print(json.dumps(row), flush=True)
            rows.append(row)
    text = report(rows)
    print(text)
    if args.out:
        Path(f"{args.out}.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
        Path(f"{args.out}.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
