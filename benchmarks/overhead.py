"""What the search framework itself costs, apart from the model.

Figures:
- expansions/s with a zero-latency scripted model, per strategy: the cost of the
  engine alone (budget reserve/reconcile, dedup, pre-filter, evaluation, events,
  frontier updates), with three children per expansion;
- peak memory (tracemalloc) of a search that grows a 10,000-node tree, with its
  event trace, and the size of its saved state as JSON;
- with `--model SPEC`: a real run (Game of 24, "4 5 6 10") and the share of its wall
  time spent outside the model (targets: <= 1 % of wall time, <= 100 MB per 10k nodes).

    python benchmarks/overhead.py [--nodes 10000] [--model embedded] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import time
import tracemalloc
from dataclasses import dataclass
from typing import Any

from guardsearch.core.context import Context
from guardsearch.core.events import Trace
from guardsearch.core.guard_result import GuardResult
from guardsearch.core.messages import Message, ModelRequest
from guardsearch.models.scripted import ScriptedModel
from guardsearch.search import BaseSpace, Node, Proposal, Root, search

CHILDREN = 3


@dataclass(kw_only=True)
class WideSpace(BaseSpace):
    """Every state is a number; its children are the next CHILDREN numbers. No goal."""

    depth_limit: int = 10_000

    def root(self) -> Root:
        return Root(state=0, context=Context(objective="Benchmark the search engine"))

    def request(
        self, node: Node, context: Context, *, seed: int, temperature: float
    ) -> ModelRequest:
        return ModelRequest(
            messages=(Message("system", context.render()), Message("user", str(node.state))),
            seed=seed,
            temperature=temperature,
            max_tokens=16,
        )

    def parse(self, node: Node, text: str) -> list[Proposal]:
        return [Proposal(state=int(t), text=t, value=int(t)) for t in text.split()]

    def key(self, node: Node, proposal: Proposal) -> str:
        return str(proposal.state)  # states are unique numbers: a cheap exact key

    async def evaluate(self, node: Node, proposal: Proposal, context: Context) -> GuardResult:
        return GuardResult.ok("bench", score=1.0 / (1 + proposal.state % 7))


def _propose(request: ModelRequest) -> str:
    n = int(request.messages[-1].content)
    return " ".join(str(n * CHILDREN + i) for i in range(1, CHILDREN + 1))


async def _run(strategy: str, expansions: int, **options: Any) -> tuple[float, Any]:
    model = ScriptedModel(_propose)
    started = time.perf_counter()
    result = await search(WideSpace(), strategy, model=model, max_expansions=expansions, **options)
    return time.perf_counter() - started, result


def throughput(expansions: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for strategy, options in (
        ("bfs", {}),
        ("beam", {"width": 50}),
        ("astar", {}),
        ("dfs", {"budgets": None}),
    ):
        seconds, result = asyncio.run(_run(strategy, expansions, **options))
        out[strategy] = {
            "expansions": result.expansions,
            "nodes": len(result.tree),
            "seconds": round(seconds, 3),
            "expansions_per_s": round(result.expansions / seconds, 1),
            "candidates_per_s": round((len(result.tree) - 1) / seconds, 1),
            "us_per_expansion": round(1e6 * seconds / max(1, result.expansions), 1),
        }
    return out


def memory(nodes: int) -> dict[str, Any]:
    gc.collect()
    tracemalloc.start()
    seconds, result = asyncio.run(_run("bfs", (nodes + CHILDREN - 1) // CHILDREN))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    state_json = json.dumps(result.state.to_dict())
    return {
        "nodes": len(result.tree),
        "events": len(result.trace),
        "peak_mb": round(peak / 2**20, 1),
        "bytes_per_node": round(peak / len(result.tree)),
        "state_json_mb": round(len(state_json) / 2**20, 2),
        "seconds": round(seconds, 2),
    }


def real_run(spec: str, numbers: str, strategy: str) -> dict[str, Any]:
    from guardsearch import model_from_spec
    from guardsearch.apps.game24 import solve_game24

    model = model_from_spec(spec)
    trace = Trace()
    started = time.perf_counter()
    out = asyncio.run(solve_game24(numbers, strategy=strategy, model=model, trace=trace))
    wall = time.perf_counter() - started
    in_model = sum(e.data["wall_s"] for e in trace.of_kind("model_call"))
    return {
        "model": model.name,
        "puzzle": numbers,
        "strategy": strategy,
        "succeeded": out["succeeded"],
        "answer": out["answer"],
        "calls": out["calls"],
        "tokens": out["tokens"],
        "wall_s": round(wall, 2),
        "model_s": round(in_model, 2),
        "outside_model_s": round(wall - in_model, 3),
        "outside_model_share_pct": round(100 * (wall - in_model) / wall, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--expansions", type=int, default=2_000)
    parser.add_argument("--model", default=None, help="model spec for the real-model run")
    parser.add_argument("--puzzle", default="4 5 6 10")
    parser.add_argument("--strategy", default="dfs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    report: dict[str, Any] = {
        "throughput": throughput(args.expansions),
        "memory": memory(args.nodes),
    }
    if args.model:
        # Warm the model first so loading the weights is not counted as search time.
        from guardsearch import model_from_spec
        from guardsearch.core.messages import Message as Msg

        asyncio.run(
            model_from_spec(args.model).complete(
                ModelRequest(messages=(Msg("user", "hi"),), max_tokens=1)
            )
        )
        report["real"] = real_run(args.model, args.puzzle, args.strategy)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print("Framework throughput (zero-latency scripted model, 3 children per expansion):")
    for name, row in report["throughput"].items():
        print(
            f"  {name:6} {row['expansions_per_s']:>8} expansions/s  "
            f"{row['candidates_per_s']:>8} candidates/s  {row['us_per_expansion']:>7} µs/expansion"
        )
    mem = report["memory"]
    print(
        f"Memory: {mem['nodes']} nodes, {mem['events']} events -> peak {mem['peak_mb']} MB "
        f"({mem['bytes_per_node']} B/node); saved state {mem['state_json_mb']} MB of JSON"
    )
    if "real" in report:
        real = report["real"]
        print(
            f"Real run ({real['model']}, {real['strategy']}, {real['puzzle']}): "
            f"succeeded={real['succeeded']} {real['answer']!r}, {real['calls']} calls, "
            f"{real['tokens']} tokens, {real['wall_s']} s wall, {real['model_s']} s in the "
            f"model -> {real['outside_model_s']} s ({real['outside_model_share_pct']} %) outside"
        )


if __name__ == "__main__":
    main()
