"""What durability costs: expansions/s with the run store on vs off, ms per save.

    python3 benchmarks/store.py [--nodes 10000] [--pg DSN] [--json]

A zero-latency scripted model over a wide synthetic space (3 children per
expansion, as in benchmarks/overhead.py) grows trees to `--nodes`. "Store on" saves
exactly what a durable run saves after every expansion (runs/runner.py): the changed
nodes, new contexts and closed-set entries, the frontier, and the events since the
last save, in one transaction. Save times are reported by tree size, to show that a
save does not grow with the tree (incremental writes, not whole-tree rewrites).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from overhead import CHILDREN, WideSpace, _propose

from guardsearch.core.events import Trace
from guardsearch.models.scripted import ScriptedModel
from guardsearch.runs.checkpoint import Checkpointer
from guardsearch.runs.runner import EventBuffer
from guardsearch.search import SearchState, search
from guardsearch.store.base import RunStore

BUCKETS = (1_000, 2_500, 5_000, 7_500, 10_000)


# Bounded frontiers (what real searches use) and one unbounded worst case, whose
# frontier (A*'s open set: two thirds of the tree) is rewritten whole at every save.
CASES: dict[str, tuple[str, dict[str, Any], int]] = {
    "beam-50": ("beam", {"width": 50}, 10_000),
    "astar-50": ("astar", {"width": 50}, 10_000),
    "dfs-depth-20": ("dfs", {}, 20),
    "astar-unbounded": ("astar", {}, 10_000),
}


async def run(case: str, expansions: int, store: RunStore | None) -> dict[str, Any]:
    strategy, options, depth = CASES[case]
    trace = Trace()
    saves: list[tuple[int, float]] = []  # (tree size, seconds)
    hook = None
    if store is not None:
        run_id = store.create_run(app="bench", strategy=strategy, spec={}, fingerprint={}).id
        buffer = EventBuffer()
        trace.subscribe(buffer)
        checkpointer = Checkpointer()

        def save(state: SearchState) -> None:
            started = time.perf_counter()
            rows = checkpointer.rows(state)
            store.save_checkpoint(run_id, rows, buffer.take())
            checkpointer.written(rows)
            saves.append((len(state.tree), time.perf_counter() - started))

        hook = save
    started = time.perf_counter()
    result = await search(
        WideSpace(depth_limit=depth),
        strategy,
        model=ScriptedModel(_propose),
        trace=trace,
        on_expansion=hook,
        max_expansions=expansions,
        **options,
    )
    seconds = time.perf_counter() - started
    out: dict[str, Any] = {
        "expansions": result.expansions,
        "nodes": len(result.tree),
        "seconds": round(seconds, 3),
        "expansions_per_s": round(result.expansions / seconds, 1),
    }
    if saves:
        out["saves"] = len(saves)
        out["ms_per_save_mean"] = round(1e3 * statistics.fmean(s for _, s in saves), 3)
        out["ms_per_save_p99"] = round(1e3 * sorted(s for _, s in saves)[int(0.99 * len(saves))], 3)
        by_size: dict[str, float] = {}
        low = 0
        for high in BUCKETS:
            inside = [s for n, s in saves if low < n <= high]
            if inside:
                by_size[f"{low + 1}-{high}"] = round(1e3 * statistics.fmean(inside), 3)
            low = high
        out["ms_per_save_by_tree_size"] = by_size
    return out


def measure(make_store: Any, nodes: int) -> dict[str, Any]:
    expansions = (nodes + CHILDREN - 1) // CHILDREN
    report: dict[str, Any] = {}
    for strategy in CASES:
        off = asyncio.run(run(strategy, expansions, None))
        store = make_store()
        on = asyncio.run(run(strategy, expansions, store))
        store.close()
        report[strategy] = {
            "store_off": off,
            "store_on": on,
            "slowdown": round(off["expansions_per_s"] / on["expansions_per_s"], 2),
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--pg", help="also measure PostgreSQL at this DSN")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from guardsearch.store.sqlite import SqliteRunStore

    folder = Path(tempfile.mkdtemp(prefix="gs-bench-"))
    results = {
        "sqlite": measure(lambda: SqliteRunStore(folder / f"{uuid.uuid4().hex}.db"), args.nodes)
    }
    if args.pg:
        from guardsearch.store.postgres import PostgresRunStore

        results["postgres"] = measure(
            lambda: PostgresRunStore(args.pg, schema=f"bench_{uuid.uuid4().hex[:12]}"), args.nodes
        )
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for backend, report in results.items():
        for strategy, r in report.items():
            on, off = r["store_on"], r["store_off"]
            print(
                f"{backend:8} {strategy:16} {on['nodes']:>6} nodes: "
                f"{off['expansions_per_s']:>8.0f} exp/s off, {on['expansions_per_s']:>8.0f} on "
                f"(x{r['slowdown']}); save {on['ms_per_save_mean']:.3f} ms mean, "
                f"{on['ms_per_save_p99']:.3f} p99; by size {on['ms_per_save_by_tree_size']}"
            )


if __name__ == "__main__":
    main()
