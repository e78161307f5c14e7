"""Programs the model writes (issue 18): write once, solve every problem of a domain.

    python3 benchmarks/program_bench.py --model embedded:1.5b --seed 0 \
        --out benchmarks/results/program_game24.json

From scratch (a fresh code cache), the `program` strategy writes `is_goal` and
`successors` for the first puzzle under a budget of `--calls` model calls for the
whole set, then solves every puzzle of the packaged data set (rows `--rows`, default
all 1,362) with the accepted code (`--domain blocks`: 100 BlocksWorld instances of 4
blocks generated from evaluation seeds 1000-1099, each plan replayed); a search-time
fault sends a function back to the model within the same budget. Reports calls,
tokens, wall time and the problems solved (each answer checked mechanically).
`--no-feedback` retries with a bare "try again" instead of the failing test. The
model is loaded on its first call only, and the model calls of one problem
take `--lock` (/tmp/gs-model.lock, the team's one-model-at-a-time lock) from the first
call to the end of that problem: the searches of later problems, which need no model,
run without it.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import model_lock

from guardsearch.apps.blocks import BlocksSpace, instance, replay
from guardsearch.apps.blocks.domain import TRAINING_SEEDS
from guardsearch.apps.game24 import check_answer, parse_numbers, puzzles, solve_game24
from guardsearch.core.budget import Budget
from guardsearch.core.events import Trace
from guardsearch.core.messages import Completion, ModelRequest
from guardsearch.models.base import WrapperModel
from guardsearch.models.metered import Metered
from guardsearch.models.spec import model_from_spec
from guardsearch.search.run import search


@dataclass
class LockedModel(WrapperModel):
    """The inner model under an exclusive lock on the file `lock`: taken at the first call
    and held until `release()` (after the problem whose calls they were), so the calls of
    one problem run in one turn of the lock and the searches run without it."""

    inner: Any
    lock: str
    _handle: Any = None

    async def complete(self, request: ModelRequest) -> Completion:
        if self._handle is None:
            self._handle = await asyncio.to_thread(model_lock.take, self.lock)
        return await self.inner.complete(request)

    def release(self) -> None:
        if self._handle is not None:
            model_lock.release(self._handle)
            self._handle = None


async def solve_one(
    domain: str, problem: Any, model: Metered, options: dict[str, Any]
) -> tuple[bool, str]:
    """(solved and checked, termination) for one problem of `domain`."""
    if domain == "game24":
        result = await solve_game24(problem, strategy="program", model=model, **options)
        ok = result["succeeded"] and check_answer(parse_numbers(problem), result["answer"]) is None
        return ok, result["termination"]
    start, goal = instance(problem, blocks=4)
    found = await search(BlocksSpace(start=start, goal=goal), "program", model=model, **options)
    return found.succeeded and replay(start, goal, found.answer) is None, found.termination


async def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.domain == "game24":
        rows: list[Any] = [p.numbers for p in puzzles()]
    else:  # generated instances from evaluation seeds (the tests use training seeds)
        rows = list(range(TRAINING_SEEDS, TRAINING_SEEDS + 100))
    start, stop = (int(x) for x in args.rows.split(":")) if args.rows else (0, len(rows))
    chosen = rows[start:stop]
    inner: Any = model_from_spec(args.model)
    if args.lock:
        inner = LockedModel(inner, args.lock)
    model = Metered(inner, Budget.of(calls=args.calls), Trace())
    cache = tempfile.mkdtemp(prefix="gs-program-cache-")
    options = {"samples": args.samples, "retries": args.retries, "feedback": args.feedback,
               "cache_dir": cache, "seed": args.seed, "search": args.search,
               "backtracks": args.backtracks}  # fmt: skip
    started = time.perf_counter()
    solved, failed, first_calls, faults = 0, [], None, 0
    for index, puzzle in enumerate(chosen):
        before = model.usage.calls
        try:
            ok, termination = await solve_one(args.domain, puzzle, model, options)
        except Exception as exc:  # a budget or model error ends the set, said in the report
            failed.append({"problem": puzzle, "error": f"{type(exc).__name__}: {exc}"})
            break
        finally:
            if isinstance(inner, LockedModel):
                inner.release()
        if first_calls is None:
            first_calls = model.usage.calls
        faults += model.usage.calls - before if index else 0
        if ok:
            solved += 1
        else:
            failed.append({"problem": puzzle, "termination": termination})
        if args.progress and index % 100 == 0:
            print(f"{index}: solved {solved}, calls {model.usage.calls}", file=sys.stderr)
    code = {p.name: json.loads(p.read_text()) for p in Path(cache).glob("*.json")}
    events = model.trace.events
    if args.trace:  # every event of the set (calls, verdicts, phases), one gzip JSON file
        with gzip.open(args.trace, "wt", encoding="utf-8") as out:
            for event in events:
                out.write(json.dumps(event.as_dict(), default=str) + "\n")
    verdicts = [
        {"step": e.step, "guard": e.data.get("guard"), "passed": e.data.get("passed"),
         "feedback": (e.data.get("feedback") or "")[:300]}
        for e in events if e.kind == "guard_verdict"
    ]  # fmt: skip
    return {
        "command": " ".join(["python3", "benchmarks/program_bench.py", *sys.argv[1:]]),
        "domain": args.domain,
        "model": args.model,
        "seed": args.seed,
        "feedback": args.feedback,
        "search": args.search,
        "backtracks": args.backtracks,
        "puzzles": len(chosen),
        "solved": solved,
        "calls": model.usage.calls,
        "calls_to_accept": first_calls,
        "calls_after_first_puzzle": faults,
        "tokens": model.usage.total_tokens,
        "seconds": round(time.perf_counter() - started, 1),
        "failed": failed[:20],
        "failed_count": len(failed),
        "code": [c.get("functions") for c in code.values()],
        "verdicts": verdicts[:60],
        "verdicts_count": len(verdicts),
    }


def markdown(report: dict[str, Any]) -> str:
    """The report as a short Markdown page (next to the JSON)."""
    rows = [
        ("domain", report["domain"]),
        ("model", report["model"]),
        ("seed", report["seed"]),
        ("feedback", "test feedback" if report["feedback"] else 'bare "try again"'),
        ("search over the code", report.get("search", "bfs")),
        ("backtracks per function", report.get("backtracks", 1)),
        ("problems", report["puzzles"]),
        ("solved (answer checked)", report["solved"]),
        ("model calls, whole set", report["calls"]),
        ("calls on the first problem (writing the code)", report["calls_to_accept"]),
        (
            "calls after the first problem (search-time faults; new writing rounds "
            "when no code was accepted yet)",
            report["calls_after_first_puzzle"],
        ),
        ("tokens", report["tokens"]),
        ("wall time, s (includes waits for the model lock)", report["seconds"]),
    ]
    table = "\n".join(f"| {k} | {v} |" for k, v in rows)
    verdicts = report.get("verdicts", [])
    tally: dict[str, list[int]] = {}
    for v in verdicts:
        tally.setdefault(v["step"], [0, 0])[0 if v["passed"] else 1] += 1
    lines = [f"| {step} | {ok} | {bad} |" for step, (ok, bad) in tally.items()]
    failures = [
        f"- `{v['step']}` ({v['guard']}): {v['feedback']}" for v in verdicts if not v["passed"]
    ]
    verdict_part = (
        "\n## Verdicts of the code guards\n\n| step | passed | failed |\n|---|---|---|\n"
        + "\n".join(lines) + "\n\nThe last failures, as the model was told:\n\n"
        + "\n".join(failures[-6:]) + "\n"
    ) if verdicts else ""  # fmt: skip
    return (
        f"# Programs the model writes: {report['domain']} on {report['model']}\n\n"
        f"Command: `{report['command']}`\n\n| | |\n|---|---|\n{table}\n{verdict_part}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="embedded:1.5b")
    parser.add_argument("--domain", choices=["game24", "blocks"], default="game24")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--calls", type=int, default=20, help="model calls for the whole set")
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--retries", type=int, default=3)
    parser.add_argument("--no-feedback", dest="feedback", action="store_false")
    parser.add_argument(
        "--search",
        choices=["bfs", "dfs", "astar"],
        default="bfs",
        help="the order in which the accepted code is searched",
    )
    parser.add_argument(
        "--backtracks",
        type=int,
        default=1,
        help="fresh rounds for a function whose retries ran out",
    )
    parser.add_argument("--rows", default="", help="start:stop (default: all rows)")
    parser.add_argument("--out", default="")
    parser.add_argument("--trace", default="", help="write every event here (.jsonl.gz)")
    parser.add_argument("--lock", default="/tmp/gs-model.lock", help="'' for no lock")
    parser.add_argument("--progress", action="store_true")
    args = parser.parse_args()
    report = asyncio.run(run(args))
    text = json.dumps(report, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n")
        Path(args.out).with_suffix(".md").write_text(markdown(report))
    print(text)


if __name__ == "__main__":
    main()
