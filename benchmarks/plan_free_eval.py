"""Free tasks: how plans for a user's own task fare, judged by constraints written by hand.

    python benchmarks/plan_free_eval.py split                      # the two halves
    flock /tmp/gs-model.lock python benchmarks/plan_free_eval.py run --split heldout \
        --pipelines single,search --limit 6                         # a piece; resumable
    python benchmarks/plan_free_eval.py report                     # plan_free.{md,json}

The tasks and their constraints are `benchmarks/data/plan_free_tasks.yaml` (written by
hand beside each task); `split_of` cuts them into a tune half and a held-out half,
stratified by kind with a fixed seed. `run` plans each task with each pipeline
(`guardsearch.apps.plan.plan_problem`, the spec read by code from the task's text) and
appends one row per (task, pipeline) to `results/plan_free_rows.jsonl`, skipping rows
already there, so a long evaluation runs in pieces under the model lock.

Each plan is judged here by the hand-written constraints (`gold`), not by the guards:
coverage (share of the task's constraints some step addresses, a budget's costs within
it), repeats (two steps with the same action, normalised here independently), and
whether a plan reported `succeeded` breaks either (it must never). The report gives per
pipeline and half: pass rate (Wilson 95%), mean coverage, full coverage, repeats, calls
and seconds; and search − single paired by task with 95% paired-bootstrap intervals.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from guardbench.free_tasks import judge, spec_recall, split_of, tasks
from guardbench.rates import wilson

RESULTS = Path(__file__).parent / "results"
ROWS = RESULTS / "plan_free_rows.jsonl"
BOOT_SEED = 35
BOOT_N = 10_000


# --- running -----------------------------------------------------------------------


def done_rows() -> list[dict[str, Any]]:
    if not ROWS.is_file():
        return []
    return [json.loads(x) for x in ROWS.read_text(encoding="utf-8").splitlines() if x]


async def run_one(
    task: dict[str, Any], pipeline: str, model: Any, budget: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    from guardsearch.apps.plan import plan_problem

    started = time.perf_counter()
    out = await plan_problem(None, task=task["task"], pipeline=pipeline, model=model, budget=budget)
    return _row(task, pipeline, out, round(time.perf_counter() - started, 1)), out


def root_row(task: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """The `single` row a free search's root phase gives: the root makes the requests
    `single` makes at 3 calls (test_a_free_search_starts_from_the_single_shot_...), so
    with a model that answers a request the same way every time its outcome is single's.
    Marked `derived` so the report says so."""
    root = out["phases"][0]
    phase = {k: root[k] for k in ("succeeded", "termination", "plan", "verdicts")}
    tree = [n for n in out["tree"] if not str(n["id"]).startswith("refine:")]
    mine = out | phase | {"calls": root["calls"], "tree": tree, "phases": [root]}
    return _row(task, "single", mine, round(root["seconds"], 1)) | {"derived": "search root"}


def _row(
    task: dict[str, Any], pipeline: str, out: dict[str, Any], seconds: float
) -> dict[str, Any]:
    verdict = judge(task, out["plan"])
    return {
        "id": task["id"],
        "kind": task["kind"],
        "pipeline": pipeline,
        "succeeded": out["succeeded"],
        "termination": out["termination"],
        "calls": out["calls"],
        "seconds": seconds,
        "spec_kind": (out["spec"] or {}).get("kind"),
        "spec_recall": spec_recall(task, out["spec"]),
        "failed_checks": [v["check"] for v in out["verdicts"] if not v["passed"]],
        "plan": out["plan"],
        "spec": out["spec"],
        # What steered the run: each judged node's step, verdict and feedback (short).
        "trail": [
            [n["step"], n["passed"], n["feedback"][:300], n.get("fix", "")[:200]]
            for n in out["tree"]
        ],
        # The free search's phases: calls, best score, which won (free_search.py).
        "phases": [
            {k: p[k] for k in ("phase", "calls", "best_score", "won")}
            for p in out.get("phases", [])
        ],
        **verdict,
    }


def _commit() -> str:
    """The commit the rows ran on (rows of several commits are told apart)."""
    import subprocess

    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    return out.stdout.strip() or "unknown"


def run(args: argparse.Namespace) -> None:
    from guardsearch.models.spec import model_from_spec

    items = tasks()
    halves = split_of(items)
    wanted = [t for t in items if args.split in ("all", halves[t["id"]])]
    if args.ids:
        wanted = [t for t in wanted if t["id"] in args.ids.split(",")]
    seen = {(r["id"], r["pipeline"], r["model"]) for r in done_rows()}
    todo = [
        (t, p)
        for t in wanted
        for p in args.pipelines.split(",")
        if (t["id"], p, args.model) not in seen
    ][: args.limit or None]
    model = model_from_spec(args.model)
    RESULTS.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    code = _commit()
    if args.single_from_root:
        # The single rows come from the searches' roots (root_row), not runs of their own.
        todo = [(t, p) for t, p in todo if p == "search"]
    for task, pipeline in todo:
        if args.minutes and time.monotonic() - started > 60 * args.minutes:
            print("time is up: the rest waits for the next piece", file=sys.stderr)
            break
        budget = args.budget if pipeline != "single" else args.single_budget
        row, out = asyncio.run(run_one(task, pipeline, model, budget))
        rows = [row]
        if args.single_from_root and (task["id"], "single", args.model) not in seen:
            rows.append(root_row(task, out) | {"budget": args.single_budget})
        for one in rows:
            one |= {"model": args.model, "split": halves[task["id"]], "code": code}
            one.setdefault("budget", budget)
            with ROWS.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(one, ensure_ascii=False) + "\n")
            print(
                f"{task['id']:<28} {one['pipeline']:<7} ok={one['succeeded']!s:<5} "
                f"cov={one['coverage']:.2f} rep={one['repeats']} calls={one['calls']} "
                f"{one['seconds']}s",
                file=sys.stderr,
            )


# --- the report --------------------------------------------------------------------


def paired_boot(diffs: list[float], seed: int = BOOT_SEED) -> tuple[float, float, float]:
    """Mean of paired differences and its 95% percentile-bootstrap interval."""
    if not diffs:
        return 0.0, 0.0, 0.0
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(rng.choice(diffs) for _ in range(n)) / n for _ in range(BOOT_N))
    return sum(diffs) / n, means[int(0.025 * BOOT_N)], means[int(0.975 * BOOT_N) - 1]


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    ok = sum(r["succeeded"] for r in rows)
    low, high = wilson(ok, n)
    dishonest = [
        r["id"]
        for r in rows
        if r["succeeded"] and (r["missing"] or r["repeats"] or r.get("order_broken"))
    ]
    return {
        "n": n,
        "pass": ok,
        "pass_rate": ok / n if n else 0.0,
        "pass_ci": [low, high],
        "coverage": sum(r["coverage"] for r in rows) / n if n else 0.0,
        "full_coverage": sum(r["coverage"] == 1.0 for r in rows),
        "with_repeats": sum(r["repeats"] > 0 for r in rows),
        "calls": sum(r["calls"] for r in rows) / n if n else 0.0,
        "seconds": sum(r["seconds"] for r in rows) / n if n else 0.0,
        "spec_recall": sum(r["spec_recall"] for r in rows) / n if n else 0.0,
        "succeeded_but_wrong": dishonest,
    }


def paired(rows: list[dict[str, Any]], a: str, b: str) -> dict[str, Any]:
    by = {(r["id"], r["pipeline"]): r for r in rows}
    ids = sorted({r["id"] for r in rows if (r["id"], a) in by and (r["id"], b) in by})
    out: dict[str, Any] = {"n": len(ids)}
    for key in ("coverage", "succeeded"):
        diffs = [float(by[(i, a)][key]) - float(by[(i, b)][key]) for i in ids]
        mean, low, high = paired_boot(diffs)
        out[key] = {"diff": mean, "ci95": [low, high]}
    return out


def report(args: argparse.Namespace) -> None:
    by_id = {t["id"]: t for t in tasks()}
    # Judged again from the stored plans, so the report follows the judgement as it is.
    rows = [r | judge(by_id[r["id"]], r["plan"]) for r in done_rows() if r["model"] == args.model]
    groups: dict[str, Any] = {}
    for half in ("tune", "heldout"):
        for pipe in sorted({r["pipeline"] for r in rows}):
            mine = [r for r in rows if r["split"] == half and r["pipeline"] == pipe]
            if mine:
                groups[f"{half}/{pipe}"] = summary(mine)
    pairs = {
        half: paired([r for r in rows if r["split"] == half], "search", "single")
        for half in ("tune", "heldout")
    }
    result = {"model": args.model, "groups": groups, "search_vs_single": pairs}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "plan_free.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "plan_free.md").write_text(markdown(result, rows))
    print((RESULTS / "plan_free.md").read_text())


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def markdown(result: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    lines = [
        "# Free tasks: plans judged by hand-written constraints",
        "",
        f"Model `{result['model']}`; tasks and constraints in "
        "`benchmarks/data/plan_free_tasks.yaml`, split by `split_of` (tune / held-out, "
        "stratified by kind). Made by `python benchmarks/plan_free_eval.py run ...` then "
        "`report` (benchmarks/README.md). The machine (2 cores) was shared with other "
        "work while it ran, so seconds are indicative.",
        "",
        "| half / pipeline | tasks | succeeded (95% Wilson) | mean coverage | full coverage "
        "| plans with repeats | mean calls | mean seconds | spec recall | succeeded but "
        "wrong |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, g in result["groups"].items():
        low, high = g["pass_ci"]
        lines.append(
            f"| {name} | {g['n']} | {g['pass']}/{g['n']} = {_pct(g['pass_rate'])} "
            f"[{_pct(low)}, {_pct(high)}] | {_pct(g['coverage'])} | {g['full_coverage']} | "
            f"{g['with_repeats']} | {g['calls']:.1f} | {g['seconds']:.0f} | "
            f"{_pct(g['spec_recall'])} | {len(g['succeeded_but_wrong'])} |"
        )
    lines += ["", "## Search vs single, paired by task", ""]
    lines += ["| half | tasks | Δ coverage (95% paired bootstrap) | Δ succeeded (95%) |"]
    lines += ["|---|---|---|---|"]
    for half, p in result["search_vs_single"].items():
        if not p["n"]:
            continue
        cov, suc = p["coverage"], p["succeeded"]
        lines.append(
            f"| {half} | {p['n']} | {cov['diff']:+.3f} [{cov['ci95'][0]:+.3f}, "
            f"{cov['ci95'][1]:+.3f}] | {suc['diff']:+.3f} [{suc['ci95'][0]:+.3f}, "
            f"{suc['ci95'][1]:+.3f}] |"
        )
    lines += [
        "",
        "Coverage: the share of a task's hand-written constraints that some step of the "
        "returned plan (the winning one, else the best judged) addresses; a budget's "
        "costs, when given, must add up to at most it. Spec recall: the share of those "
        "constraints the spec extracted by code holds. Succeeded but wrong: plans "
        "reported `succeeded` with a hand-written constraint unaddressed, a repeated "
        "step or a stated order broken.",
        "",
        "## Per task",
        "",
        "| task | half | pipeline | succeeded | coverage | missing | repeats | calls |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: (r["split"], r["id"], r["pipeline"])):
        lines.append(
            f"| {r['id']} | {r['split']} | {r['pipeline']} | {r['succeeded']} | "
            f"{r['coverage']:.2f} | {', '.join(r['missing']) or '-'} | {r['repeats']} | "
            f"{r['calls']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("split")
    r = sub.add_parser("run")
    r.add_argument("--split", choices=["tune", "heldout", "all"], default="heldout")
    r.add_argument("--pipelines", default="single,search")
    r.add_argument("--ids", default="")
    r.add_argument("--limit", type=int, default=0)
    r.add_argument("--minutes", type=float, default=0, help="start no row after this long")
    r.add_argument("--budget", type=int, default=12, help="calls for search")
    r.add_argument("--single-budget", type=int, default=3, help="calls for single")
    r.add_argument("--model", default="embedded")
    r.add_argument(
        "--single-from-root",
        action="store_true",
        help="take each single row from the search's root phase (same requests) "
        "instead of a run of its own",
    )
    p = sub.add_parser("report")
    p.add_argument("--model", default="embedded")
    args = parser.parse_args()
    if args.command == "split":
        halves = split_of(tasks())
        for half in ("tune", "heldout"):
            print(f"{half}: {', '.join(sorted(i for i, h in halves.items() if h == half))}")
    elif args.command == "run":
        run(args)
    else:
        report(args)


if __name__ == "__main__":
    main()
