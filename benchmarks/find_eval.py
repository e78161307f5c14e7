"""Evaluate `find` on requests whose right answers are known mechanically from the corpus.

Requests have the shape "KIND by NATIONALITY MAKERS" ("paintings by Spanish painters").
The right answers are the corpus's works of that kind attributed to a creator ("1656
painting by Diego Velázquez": `rules.type_rejection` passes and `rules.creator_of`
names the creator) whose own article is a biography whose description names the
nationality ("Spanish painter (1599–1660)"; "German-born", "-language" compounds do
not count). Every pair with at least `MIN_TRUTH` right answers is a request.

A returned item is right when it is one of its request's right answers, wrong when it
is not and its creator's article is in the corpus (so the description rule decides),
and unjudged when no creator article can be found (reported, left out of precision).
Precision is right / (right + wrong); recall is right / the request's right answers.

    python benchmarks/find_eval.py --list                    # the requests, no model
    flock /tmp/gs-model.lock python benchmarks/find_eval.py --limit 6 --name find_eval_p1
    flock /tmp/gs-model.lock python benchmarks/find_eval.py --offset 6 --name find_eval_p2
    python benchmarks/find_eval.py --merge find_eval_p1 find_eval_p2 --name find_eval
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from guardbench.corpus import Article, articles
from guardbench.find_cases import KINDS, MAKERS, NATIONALITIES

from guardsearch.apps.find import find
from guardsearch.apps.find.rules import creator_of, is_person, type_rejection
from guardsearch.apps.find.spec import plural
from guardsearch.core.steering import Steering
from guardsearch.models.spec import model_from_spec

RESULTS = Path(__file__).parent / "results"
MIN_TRUTH = 3
_COMPOUND = re.compile(r"\b\w+[-‐‑](?:language|speaking|born|based)\b")


def truth() -> dict[tuple[str, str], set[str]]:
    """(kind, nationality) -> titles of the right answers."""
    by_title = articles()
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for title, work in by_title.items():
        creator = by_title.get(creator_of(work.description))
        if creator is None or not is_person(creator.description):
            continue
        said = _COMPOUND.sub(" ", creator.description)
        for kind in KINDS:
            if not _is_work(work, kind):
                continue
            for who in NATIONALITIES:
                if re.search(rf"\b{who}\b", said):
                    out[(kind, who)].add(title)
    return out


def _is_work(work: Article, kind: str) -> bool:
    named = re.search(rf"\b{kind}\b", work.description, re.I) is not None
    return named and type_rejection(work.description, kind) is None


def requests() -> list[dict[str, Any]]:
    """Every request with at least `MIN_TRUTH` right answers, most answers first."""
    rows = [
        {
            "request": f"{plural(kind)} by {who} {MAKERS[kind]}",
            "kind": kind,
            "nationality": who,
            "right": sorted(titles),
        }
        for (kind, who), titles in truth().items()
        if len(titles) >= MIN_TRUTH
    ]
    return sorted(rows, key=lambda r: (-len(r["right"]), r["request"]))


def judge(title: str, description: str, right: set[str]) -> str:
    """right / wrong / unjudged for one returned item (see the module docstring)."""
    if title in right:
        return "right"
    creator = creator_of(description)
    return "wrong" if creator and creator in articles() else "unjudged"


async def evaluate(rows: list[dict[str, Any]], spec: str, calls: int) -> list[dict[str, Any]]:
    model = model_from_spec(spec)
    out = []
    for number, row in enumerate(rows, 1):
        started = time.perf_counter()
        run = await find(row["request"], model=model, budget={"calls": calls}, min_items=3)
        seconds = time.perf_counter() - started
        right = set(row["right"])
        items = [
            {
                "title": s.title,
                "description": s.description,
                "verdict": judge(s.title, s.description, right),
            }
            for s in run.items
        ]
        result = {
            **row,
            "items": items,
            "n_right": sum(i["verdict"] == "right" for i in items),
            "n_wrong": sum(i["verdict"] == "wrong" for i in items),
            "n_unjudged": sum(i["verdict"] == "unjudged" for i in items),
            "calls": run.usage.calls,
            "seconds": round(seconds, 1),
            "stop": run.stop_reason,
            "steering": Steering.from_events(run.trace.events).as_dict(),
        }
        out.append(result)
        print(
            f"[{number}/{len(rows)}] {row['request']}: {result['n_right']} right, "
            f"{result['n_wrong']} wrong, {result['n_unjudged']} unjudged of {len(right)} "
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
    return {
        "requests": len(rows),
        "returned": sum(len(r["items"]) for r in rows),
        "right": right,
        "wrong": wrong,
        "unjudged": sum(r["n_unjudged"] for r in rows),
        "precision": round(right / (right + wrong), 3) if right + wrong else None,
        "recall": round(right / known, 3) if known else None,
        "requests_with_nothing": sum(not r["items"] for r in rows),
        "calls_mean": round(sum(r["calls"] for r in rows) / len(rows), 1) if rows else 0,
        "steering": steering.as_dict(),
    }


def markdown(report: dict[str, Any]) -> str:
    s = report["summary"]
    lines = [
        f"# find evaluation ({report['model']})",
        "",
        f"{report['date']}, {report['machine']}. Budget {report['calls']} model calls per "
        "request, at least 3 items asked. Requests and right answers are built from the "
        "corpus by `benchmarks/find_eval.py` (see its docstring); no rule or prompt was "
        "tuned on them.",
        "",
        f"Command: `{report['command']}`",
        "",
        "| metric | value |",
        "|---|---|",
        f"| requests | {s['requests']} |",
        f"| items returned (right / wrong / unjudged) | {s['returned']} ({s['right']} / "
        f"{s['wrong']} / {s['unjudged']}) |",
        f"| precision (right / judged) | {_pct(s['precision'])} |",
        f"| recall (right / right answers in the corpus) | {_pct(s['recall'])} |",
        f"| requests that returned nothing | {s['requests_with_nothing']} |",
        f"| model calls per request (mean) | {s['calls_mean']} |",
        f"| steering: outputs / repeats (share) / repairs / prevented | "
        f"{s['steering']['outputs']} / {s['steering']['repeats']} "
        f"({s['steering']['repeat_share']:.0%}) / {s['steering']['repairs']} / "
        f"{s['steering']['prevented']} |",
        "",
        "| request | right answers | right | wrong | unjudged | calls | s "
        "| wrong or unjudged items |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in report["rows"]:
        odd = "; ".join(
            f"{i['title']} ({i['description']})" for i in r["items"] if i["verdict"] != "right"
        )
        lines.append(
            f"| {r['request']} | {len(r['right'])} | {r['n_right']} | {r['n_wrong']} | "
            f"{r['n_unjudged']} | {r['calls']} | {r['seconds']} | {odd.replace('|', '/')} |"
        )
    return "\n".join(lines) + "\n"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def write(report: dict[str, Any], name: str) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(report, indent=2, ensure_ascii=False))
    (RESULTS / f"{name}.md").write_text(markdown(report))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--calls", type=int, default=30, help="model calls per request")
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--name", default="find_eval")
    parser.add_argument("--list", action="store_true", help="print the requests and stop")
    parser.add_argument("--merge", nargs="+", metavar="NAME", help="join pieces into --name")
    args = parser.parse_args()
    if args.merge:
        pieces = [json.loads((RESULTS / f"{n}.json").read_text()) for n in args.merge]
        report = {**pieces[0], "rows": [r for p in pieces for r in p["rows"]]}
        report["command"] = " && ".join(p["command"] for p in pieces)
        report["summary"] = summarise(report["rows"])
        write(report, args.name)
        print(json.dumps(report["summary"], indent=2))
        return
    rows = requests()
    if args.list:
        for r in rows:
            print(f"{r['request']}: {len(r['right'])} right answers: {', '.join(r['right'])}")
        return
    rest = rows[args.offset :]
    chosen = rest[: args.limit] if args.limit else rest
    results = asyncio.run(evaluate(chosen, args.model, args.calls))
    report = {
        "model": args.model,
        "calls": args.calls,
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
        "command": "python benchmarks/find_eval.py " + " ".join(sys.argv[1:]),
        "summary": summarise(results),
        "rows": results,
    }
    write(report, args.name)
    print(json.dumps(report["summary"], indent=2))


if __name__ == "__main__":
    main()
