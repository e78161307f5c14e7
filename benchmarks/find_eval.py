"""Evaluate `find` on requests of ten shapes whose right answers are known from the corpus.

The requests and their right answers (gold sets) are built by
`benchmarks/guardbench/find_requests.py` (see its docstring: ten shapes, gold computed
from the articles' descriptions and first sentences by its own code), split per shape
into a tune half and a held-out half. A returned item is right when it is in its
request's gold set and wrong otherwise. Precision is right / returned; recall is
right / gold. Each run asks for at least 3 items (the CLI's default); the loop returns
every item it verified.

    python benchmarks/find_eval.py --list          # the held-out requests (--split tune)
    python benchmarks/find_eval.py --split tune --dry --name find_dry_tune
    flock /tmp/gs-model.lock python benchmarks/find_eval.py --limit 7 --name find_eval_p0
    flock /tmp/gs-model.lock python benchmarks/find_eval.py --offset 7 --limit 7 \
        --name find_eval_p7                        # ... and --offset 14, --offset 21
    python benchmarks/find_eval.py --merge find_eval_p0 find_eval_p7 ... --name find_eval

`--dry` replaces the model by a scripted planner that writes the request's own item
noun, qualifier and words (what the plan's schema allows) and turns the judge off: it
measures search, rules and refinements without model time (used on the tune half).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from guardbench.find_requests import requests
from guardbench.rates import wilson

from guardsearch.apps.find import find
from guardsearch.apps.find.request import grounded_words, item_noun, request_qualifier
from guardsearch.apps.find.spec import singular
from guardsearch.core.messages import ModelRequest
from guardsearch.core.steering import Steering
from guardsearch.models.scripted import ScriptedModel
from guardsearch.models.spec import model_from_spec

RESULTS = Path(__file__).parent / "results"
MIN_ITEMS = 3


def code_version() -> str:
    """The commit the run's code is at (a `+` when the work tree has changes)."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "src"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+" if dirty else "")


def scripted_planner(request: ModelRequest) -> str:
    """--dry: the plan a grammar-bound planner can write (the request's own fields)."""
    asked = request.messages[-1].content.split("Request: ", 1)[1].rsplit(" (at least", 1)[0]
    noun = item_noun(asked)
    return json.dumps(
        {
            "reflection": {
                "plan": "search",
                "assumptions": [],
                "risks": [],
                "success_criteria": "items",
            },
            "item_type": singular(noun),
            "qualifier": request_qualifier(asked),
            "keywords": grounded_words(asked)[:4] or [noun],
            "domain": "general",
        }
    )


async def evaluate(
    rows: list[dict[str, Any]],
    spec: str,
    calls: int,
    dry: bool,
    save: Callable[[list[dict[str, Any]]], None] = lambda rows: None,
) -> list[dict[str, Any]]:
    """Run every request; `save` gets the rows so far after each (a killed piece keeps
    what it measured)."""
    model = ScriptedModel(scripted_planner) if dry else model_from_spec(spec)
    code = code_version()
    out = []
    for number, row in enumerate(rows, 1):
        started = time.perf_counter()
        run = await find(
            row["request"],
            model=model,
            budget={"calls": calls},
            min_items=MIN_ITEMS,
            use_judge=not dry,
        )
        seconds = time.perf_counter() - started
        right = set(row["right"])
        items = [  # a wrong item keeps its description (the report shows why)
            {"title": s.title, "verdict": "right"}
            if s.title in right
            else {"title": s.title, "description": s.description, "verdict": "wrong"}
            for s in run.items
        ]
        result = {
            **row,
            "items": items,
            "n_right": sum(i["verdict"] == "right" for i in items),
            "n_wrong": sum(i["verdict"] == "wrong" for i in items),
            "calls": run.usage.calls,
            "seconds": round(seconds, 1),
            "stop": run.stop_reason,
            "code": code,
            "steering": Steering.from_events(run.trace.events).as_dict(),
        }
        out.append(result)
        save(out)
        print(
            f"[{number}/{len(rows)}] {row['request']}: {result['n_right']} right, "
            f"{result['n_wrong']} wrong of {len(right)} "
            f"({seconds:.0f}s, {run.usage.calls} calls)",
            file=sys.stderr,
            flush=True,
        )
    return out


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    right = sum(r["n_right"] for r in rows)
    wrong = sum(r["n_wrong"] for r in rows)
    known = sum(len(r["right"]) for r in rows)
    steering = sum((Steering.from_dict(r["steering"]) for r in rows), Steering())
    n = len(rows) or 1
    return {
        "requests": len(rows),
        "returned": right + wrong,
        "right": right,
        "wrong": wrong,
        "gold": known,
        "precision": round(right / (right + wrong), 3) if right + wrong else None,
        "precision95": list(wilson(right, right + wrong)) if right + wrong else None,
        "recall": round(right / known, 3) if known else None,
        "recall95": list(wilson(right, known)) if known else None,
        "requests_with_nothing": sum(not r["items"] for r in rows),
        "calls_mean": round(sum(r["calls"] for r in rows) / n, 1),
        "seconds_mean": round(sum(r["seconds"] for r in rows) / n, 1),
        "steering": steering.as_dict(),
    }


def by_shape(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    shapes: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        shapes[row["shape"]].append(row)
    return {shape: summarise(group) for shape, group in sorted(shapes.items())}


def _interval(value: float | None, bounds: list[float] | None) -> str:
    if value is None or bounds is None:
        return "n/a"
    return f"{value:.0%} ({bounds[0]:.0%}–{bounds[1]:.0%})"


def markdown(report: dict[str, Any]) -> str:
    s = report["summary"]
    lines = [
        f"# find evaluation ({report['model']}, {report['split']} half)",
        "",
        f"{report['date']}, {report['machine']} (shared by several engineers: seconds are "
        f"indicative). Budget {report['calls']} model calls per request, at least "
        f"{MIN_ITEMS} items asked (every verified item is returned). Requests and right "
        "answers are built from the corpus by `benchmarks/guardbench/find_requests.py`; "
        "the tune half was used to develop the rules, the held-out half was not.",
        "",
        f"Command: `{report['command']}`",
        "",
        *([report["note"], ""] if report.get("note") else []),
        f"Overall: {s['requests']} requests, {s['returned']} items returned, precision "
        f"{_interval(s['precision'], s['precision95'])}, recall "
        f"{_interval(s['recall'], s['recall95'])}, {s['calls_mean']} calls and "
        f"{s['seconds_mean']} s per request (mean), {s['requests_with_nothing']} "
        "requests returned nothing.",
        "",
        "| shape | requests | gold | returned | precision (95% CI) | recall (95% CI) "
        "| calls/request | s/request |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for shape, t in report["shapes"].items():
        lines.append(
            f"| {shape} | {t['requests']} | {t['gold']} | {t['returned']} | "
            f"{_interval(t['precision'], t['precision95'])} | "
            f"{_interval(t['recall'], t['recall95'])} | {t['calls_mean']} | "
            f"{t['seconds_mean']} |"
        )
    lines += [
        "",
        "| shape | request | gold | right | wrong | calls | s | stop | code | wrong items |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["rows"]:
        odd = "; ".join(
            f"{i['title']} ({i['description']})" for i in r["items"] if i["verdict"] != "right"
        )
        lines.append(
            f"| {r['shape']} | {r['request']} | {len(r['right'])} | {r['n_right']} | "
            f"{r['n_wrong']} | {r['calls']} | {r['seconds']} | {r['stop']} | "
            f"{r.get('code', '')} | {odd.replace('|', '/')} |"
        )
    return "\n".join(lines) + "\n"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def write(report: dict[str, Any], name: str) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(report, ensure_ascii=False))
    (RESULTS / f"{name}.md").write_text(markdown(report))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--calls", type=int, default=30, help="model calls per request")
    parser.add_argument("--split", choices=("tune", "held_out"), default="held_out")
    parser.add_argument("--shape", default=None, help="only this request shape")
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--name", default="find_eval")
    parser.add_argument("--dry", action="store_true", help="scripted planner, no judge")
    parser.add_argument("--list", action="store_true", help="print the requests and stop")
    parser.add_argument("--merge", nargs="+", metavar="NAME", help="join pieces into --name")
    parser.add_argument("--note", default="", help="a paragraph for the report (with --merge)")
    args = parser.parse_args()
    if args.merge:
        pieces = [json.loads((RESULTS / f"{n}.json").read_text()) for n in args.merge]
        report = {**pieces[0], "rows": [r for p in pieces for r in p["rows"]]}
        report["command"] = " && ".join(p["command"] for p in pieces)
        report["note"] = args.note
        report["summary"] = summarise(report["rows"])
        report["shapes"] = by_shape(report["rows"])
        write(report, args.name)
        print(json.dumps(report["shapes"], indent=1))
        return
    rows = [
        r
        for r in requests()
        if r["split"] == args.split and (args.shape is None or r["shape"] == args.shape)
    ]
    if args.list:
        for r in rows:
            print(f"{r['shape']}: {r['request']}: {len(r['right'])}: {', '.join(r['right'])}")
        return
    rest = rows[args.offset :]
    chosen = rest[: args.limit] if args.limit else rest
    header = {
        "model": "scripted planner, no judge" if args.dry else args.model,
        "split": args.split,
        "calls": args.calls,
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
        "command": "python benchmarks/find_eval.py " + " ".join(sys.argv[1:]),
    }

    def save(done: list[dict[str, Any]]) -> None:
        report = {**header, "summary": summarise(done), "shapes": by_shape(done), "rows": done}
        write(report, args.name)

    results = asyncio.run(evaluate(chosen, args.model, args.calls, args.dry, save))
    save(results)
    print(json.dumps(by_shape(results), indent=1))


if __name__ == "__main__":
    main()
