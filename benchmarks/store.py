"""What durability costs: expansions/s with the run store on vs off, ms per expansion.

    python3 benchmarks/store.py [--nodes 10000] [--pg DSN] [--json] [--out benchmarks/results/store]

A zero-latency scripted model over a wide synthetic space (3 children per
expansion, as in benchmarks/overhead.py) grows every case's tree to `--nodes`.
"Store on" writes exactly what a durable run writes (runs/runner.py): each model
answer goes into the run's memo the moment it returns (one autocommitted insert,
a `CachedModel` over a `RunStoreCache`), and after every expansion one checkpoint
transaction holds the changed nodes, new contexts and closed-set entries, the changed
rows of the strategy's tables (A*'s open set, a BFS level), its small frontier data,
the events since the last save, and the owner's compare-and-set with its lease renewal.

"Store ms per expansion" is the memo inserts plus the checkpoint of one expansion
(building the rows, JSON and commit included). It is reported at 1k, 5k and 10k
nodes (the mean over the expansions that took the tree through the last tenth
before each mark), to show that it does not grow with the tree. With `--out PREFIX`
the report is also written to PREFIX.json and PREFIX.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from overhead import CHILDREN, WideSpace, _propose

from guardsearch.core.budget import StepBudget
from guardsearch.core.events import Trace
from guardsearch.models.cache import CachedModel
from guardsearch.models.scripted import ScriptedModel
from guardsearch.runs.cache import RunStoreCache
from guardsearch.runs.checkpoint import Checkpointer
from guardsearch.runs.runner import EventBuffer
from guardsearch.search import SearchState, search
from guardsearch.store.base import RunStore
from guardsearch.store.sql import new_owner, release_owner

MARKS = (1_000, 5_000, 10_000)
LEASE = 600.0

# Bounded frontiers (what real searches use) and unbounded ones, whose open set or
# level grows with the tree (rows in a table: only each expansion's changes are saved).
CASES: dict[str, tuple[str, dict[str, Any], int]] = {
    "beam-50": ("beam", {"width": 50}, 10_000),
    "astar-50": ("astar", {"width": 50}, 10_000),
    "astar-unbounded": ("astar", {}, 10_000),
    "bfs-unbounded": ("bfs", {}, 10_000),
    # Depth-first over a 3-ary tree 20 levels deep, backtracking to paid-for siblings.
    "dfs-depth-20": (
        "dfs",
        {"budgets": StepBudget(rmax=1, backtrack_budget=1_000_000), "prefer_siblings": True},
        20,
    ),
}


class TimedMemo:
    """The store's memo insert, timed: what each model answer costs a durable run."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.seconds = 0.0
        self.inserts = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def remember(self, *args: Any) -> None:
        started = time.perf_counter()
        self.store.remember(*args)
        self.seconds += time.perf_counter() - started
        self.inserts += 1


async def run(case: str, expansions: int, store: RunStore | None) -> dict[str, Any]:
    strategy, options, depth = CASES[case]
    trace = Trace()
    samples: list[tuple[int, float, float]] = []  # (tree size, save s, memo s) per expansion
    hook = None
    model: Any = ScriptedModel(_propose)
    owner = new_owner()
    if store is not None:
        run_id = store.create_run(app="bench", strategy=strategy, spec={}, fingerprint={}).id
        store.claim(run_id, owner, lease=LEASE)
        buffer = EventBuffer()
        trace.subscribe(buffer)
        checkpointer = Checkpointer()
        memo_store = TimedMemo(store)
        model = CachedModel(model, RunStoreCache(memo_store, run_id))  # type: ignore[arg-type]
        last = [0]

        def save(state: SearchState) -> None:
            started = time.perf_counter()
            rows = checkpointer.rows(state)
            store.save_checkpoint(run_id, rows, buffer.take(), owner=owner, lease=LEASE)
            checkpointer.written(rows)
            seconds = time.perf_counter() - started
            if state.expansions > last[0]:
                last[0] = state.expansions
                samples.append((len(state.tree), seconds, memo_store.seconds))
            memo_store.seconds = 0.0

        hook = save
    started = time.perf_counter()
    result = await search(
        WideSpace(depth_limit=depth),
        strategy,
        model=model,
        trace=trace,
        on_expansion=hook,
        max_expansions=expansions,
        **options,
    )
    seconds = time.perf_counter() - started
    release_owner(owner)
    out: dict[str, Any] = {
        "expansions": result.expansions,
        "nodes": len(result.tree),
        "seconds": round(seconds, 3),
        "expansions_per_s": round(result.expansions / seconds, 1),
    }
    if samples:
        total = [s + m for _, s, m in samples]
        out["ms_per_expansion_mean"] = _ms(statistics.fmean(total))
        out["ms_per_expansion_p99"] = _ms(sorted(total)[int(0.99 * len(total))])
        out["ms_checkpoint_mean"] = _ms(statistics.fmean(s for _, s, _ in samples))
        out["ms_memo_mean"] = _ms(statistics.fmean(m for _, _, m in samples))
        at: dict[str, float] = {}
        for mark in MARKS:
            inside = [s + m for n, s, m in samples if 0.9 * mark < n <= mark]
            if inside:
                at[f"{mark // 1000}k"] = _ms(statistics.fmean(inside))
        out["ms_per_expansion_at_nodes"] = at
    return out


def _ms(seconds: float) -> float:
    return round(1e3 * seconds, 3)


def measure(make_store: Any, nodes: int) -> dict[str, Any]:
    expansions = (nodes + CHILDREN - 1) // CHILDREN
    report: dict[str, Any] = {}
    for case in CASES:
        off = asyncio.run(run(case, expansions, None))
        store = make_store()
        on = asyncio.run(run(case, expansions, store))
        store.close()
        report[case] = {
            "store_off": off,
            "store_on": on,
            "slowdown": round(off["expansions_per_s"] / on["expansions_per_s"], 2),
        }
    return report


def machine(pg: str | None) -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "cpus": os.cpu_count(),
        "load_average_1m_at_start": round(os.getloadavg()[0], 2),
    }
    if pg:
        import psycopg

        with psycopg.connect(pg) as conn:
            row = conn.execute("SHOW server_version").fetchone()
            info["postgres"] = row[0] if row else None
    return info


def markdown(results: dict[str, Any]) -> str:
    meta = results["machine"]
    lines = [
        "# Store benchmark: what a durable run's writes cost per expansion",
        "",
        "Written by `python3 benchmarks/store.py --pg DSN --out benchmarks/results/store` "
        f"(Python {meta['python']}, SQLite {meta['sqlite']}"
        + (f", PostgreSQL {meta['postgres']} on localhost" if meta.get("postgres") else "")
        + f"; {meta['cpus']} CPUs, load average {meta['load_average_1m_at_start']} at the "
        "start: a shared box, so absolute figures are noisy). Zero-latency scripted model; "
        f"every tree grown to {results['nodes']:,} nodes. Store ms per expansion = the memo "
        "insert of its model call + its checkpoint transaction (rows, JSON, commit).",
        "",
        "| case | backend | nodes | expansions/s off → on | store ms per expansion, mean (p99) "
        "| at 1k / 5k / 10k nodes | checkpoint + memo (mean) |",
        "|---|---|---|---|---|---|---|",
    ]
    for backend in ("sqlite", "postgres"):
        for case, r in results.get(backend, {}).items():
            on, off = r["store_on"], r["store_off"]
            at = on["ms_per_expansion_at_nodes"]
            lines.append(
                f"| {case} | {'SQLite' if backend == 'sqlite' else 'PostgreSQL'} "
                f"| {on['nodes']:,} | {off['expansions_per_s']:,.0f} → "
                f"{on['expansions_per_s']:,.0f} | {on['ms_per_expansion_mean']:.2f} "
                f"({on['ms_per_expansion_p99']:.2f}) | "
                + " / ".join(f"{at.get(k, float('nan')):.2f}" for k in ("1k", "5k", "10k"))
                + f" | {on['ms_checkpoint_mean']:.2f} + {on['ms_memo_mean']:.2f} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--pg", help="also measure PostgreSQL at this DSN")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", type=Path, help="also write OUT.json and OUT.md")
    args = parser.parse_args()
    from guardsearch.store.sqlite import SqliteRunStore

    folder = Path(tempfile.mkdtemp(prefix="gs-bench-"))
    results: dict[str, Any] = {"machine": machine(args.pg), "nodes": args.nodes}
    results["sqlite"] = measure(
        lambda: SqliteRunStore(folder / f"{uuid.uuid4().hex}.db"), args.nodes
    )
    if args.pg:
        from guardsearch.store.postgres import PostgresRunStore

        results["postgres"] = measure(
            lambda: PostgresRunStore(args.pg, schema=f"bench_{uuid.uuid4().hex[:12]}"), args.nodes
        )
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")
        args.out.with_suffix(".md").write_text(markdown(results))
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(markdown(results))


if __name__ == "__main__":
    main()
