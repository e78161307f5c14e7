"""The wide research evaluation: every answer type, two hops, unanswerable questions.

    python benchmarks/research_wide.py build            # writes benchmarks/data/research_wide.jsonl
    python benchmarks/research_wide.py build --check    # exit 1 if the committed file differs
    flock /tmp/gs-model.lock python benchmarks/research_wide.py run --split heldout \\
        --per-type 12 --name wide_heldout_loop
    flock /tmp/gs-model.lock python benchmarks/research_wide.py run --split heldout \\
        --per-type 12 --baseline --name wide_heldout_single
    python benchmarks/research_wide.py report --loop wide_heldout_loop \\
        --single wide_heldout_single --name research_wide_heldout

The questions come from benchmarks/guardbench/wide_questions.py (what each type holds
and how it is generated); `tune` is the half the guards were tuned on, `heldout` is
never tuned on. `run` evaluates the research loop (or, with `--baseline`, one synthesis
call over the top-5 BM25 sources with no guard: the same model, retrieval and prompt)
on the first `--per-type` questions of each type in the split, and writes one JSON row
per question (answer, status, right, repaired, calls, tokens, seconds) to
benchmarks/results/NAME.json; `report` writes the per-type table with 95% Wilson
intervals and the paired loop-vs-single table (a paired bootstrap of the accuracy
difference) to benchmarks/results/NAME.md.

Judging (code, from the gold record): a year, number, name or title is right when the
answer holds it (accents and case folded, thousands separators ignored); yes/no by the
answer's first word; a list when it names `need` gold items; a definition when it holds
a key word of the article's description (its first six letters); an unanswerable
question only when the run's status is `not_found`. An answerable question answered
`not_found` is wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import platform
import random
import re
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from guardbench.wide_questions import blind as blind_questions
from guardbench.wide_questions import build as build_questions

DATA = Path(__file__).parent / "data" / "research_wide.jsonl"
# Questions no run has seen, built after every change this set measures was made.
BLIND = Path(__file__).parent / "data" / "research_wide_blind.jsonl"
RESULTS = Path(__file__).parent / "results"


def _fold(text: str) -> str:
    flat = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.sub(r"(?<=\d)[,\s](?=\d{3}\b)", "", flat)


def load(split: str, types: list[str] | None = None, user: bool = False) -> list[dict[str, Any]]:
    if user:
        from guardbench.user_corpus import questions as user_questions

        rows = [q.record() for q in user_questions()]
    else:
        data = BLIND if split == "blind" else DATA
        rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    return [r for r in rows if split in ("all", r["split"]) and (not types or r["type"] in types)]


# Types whose answer needs two facts: a second hop, or one fact per side compared.
TWO_FACTS = ("twohop", "yesno", "choices")


def right(q: dict[str, Any], answer: str, status: str) -> bool:
    """Whether the user got the right answer (an error gives them none)."""
    if status.startswith("error"):
        return False
    if q["type"] == "unanswerable":
        return status == "not_found"
    if status == "not_found":
        return False
    said = _fold(answer)
    if q["type"] in ("yesno", "claims"):
        # The verdict the answer leads with ("No, ...", "Brahms: yes").
        first = re.search(r"^\W*(yes|no)\b|[:–—]\s*(yes|no)\b", said)
        return first is not None and (first.group(1) or first.group(2)) == q["answers"][0]
    if q["type"] == "choices":
        # The name the answer leads with, before its facts ("Plato: Plato was born ...").
        lead = re.split(r"[:;\[]", said, maxsplit=1)[0]
        other = _fold(q["extra"]["other"])
        return _fold(q["answers"][0]) in lead and other not in lead
    if q["type"] == "lists":
        return sum(1 for item in q["answers"] if _fold(item) in said) >= q["need"]
    if q["type"] == "definitions":
        keys = [_fold(k) for k in q["answers"]]
        return any(re.search(rf"\b{re.escape(k[:6])}", said) for k in keys)
    return any(_fold(a) in said for a in q["answers"])


# -- running -------------------------------------------------------------------------


def _per_type(
    questions: list[dict[str, Any]], per_type: int | None, offset: int
) -> list[dict[str, Any]]:
    by_type: dict[str, list[dict[str, Any]]] = {}
    for q in questions:
        by_type.setdefault(q["type"], []).append(q)
    out = []
    for rows in by_type.values():
        rows = rows[offset:]
        out += rows[:per_type] if per_type else rows
    return out


def user_provider() -> Any:
    """The invented documents (guardbench/user_corpus.py) added as a user corpus, the
    way `guardsearch corpus add` adds a folder, in a throwaway index."""
    import tempfile

    from guardbench.user_corpus import CORPUS, write

    from guardsearch.corpus import CorpusIndex, add_files
    from guardsearch.tools import CorpusProvider

    folder = Path(tempfile.mkdtemp(prefix="gs-user-corpus-"))
    write(folder / "docs")
    index = CorpusIndex(folder / "index.sqlite3")
    add_files(index, folder / "docs", CORPUS)
    return CorpusProvider(index, corpus=CORPUS)


def provider(user: bool) -> Any:
    from guardsearch.tools import CorpusProvider

    return user_provider() if user else CorpusProvider(corpus="wikipedia")


async def run_loop(
    questions: list[dict[str, Any]], spec: str, user: bool = False
) -> list[dict[str, Any]]:
    from guardsearch.core.steering import Steering
    from guardsearch.loops.research import ResearchConfig, ResearchLoop
    from guardsearch.models.spec import model_from_spec

    loop = ResearchLoop(
        model=model_from_spec(spec),
        providers=[provider(user)],
        config=ResearchConfig.from_env(),
    )
    rows = []
    for n, q in enumerate(questions, 1):
        started = time.perf_counter()
        run = await loop.run(q["question"])
        seconds = time.perf_counter() - started
        data = run.response.model_dump(mode="json")
        if "error" in data:
            answer, status = "", "error"
            details = data["error"].get("details") or {}
            answer = str(details.get("answer") or details.get("last_output") or "")
            status = f"error:{data['error']['type']}"
        else:
            answer = data.get("final_answer", "")
            status = data.get("status", "verified")
        steering = Steering.from_events(run.trace.events, step="research-synthesize").as_dict()
        row = {
            "id": q["id"],
            "type": q["type"],
            "question": q["question"],
            "answer": answer,
            "status": status,
            "right": right(q, answer, status),
            "repaired": bool(steering.get("repairs")),
            "calls": run.usage.calls,
            "tokens": run.usage.total_tokens,
            "seconds": round(seconds, 2),
        }
        rows.append(row)
        print(
            f"[{n}/{len(questions)}] {'ok' if row['right'] else '--'} {status:10} {seconds:5.1f}s "
            f"{q['question']} -> {answer[:80]!r} (gold {q['answers'][:3]})",
            file=sys.stderr,
            flush=True,
        )
    return rows


async def run_single(
    questions: list[dict[str, Any]], spec: str, user: bool = False
) -> list[dict[str, Any]]:
    """The baseline: top-5 BM25 sources, one synthesis call, no guard."""
    from dataclasses import replace

    from guardsearch.core.context import Context
    from guardsearch.core.errors import StepFailed
    from guardsearch.loops.research.phases import render_sources
    from guardsearch.loops.research.schemas import SynthesisDraft
    from guardsearch.models.metered import Metered
    from guardsearch.models.spec import model_from_spec
    from guardsearch.prompts import PromptTemplate
    from guardsearch.steps.step import Step, run_step

    model = model_from_spec(spec)
    search = provider(user)
    step = Step(
        name="single-synthesis",
        prompt=PromptTemplate.packaged("research_synthesize"),
        schema=SynthesisDraft,
        rmax=1,
        max_tokens=160,
    )
    rows = []
    for n, q in enumerate(questions, 1):
        started = time.perf_counter()
        hits = await search.search(q["question"], 5)
        shown = [replace(h, id=f"[{i}]") for i, h in enumerate(hits, 1)]
        metered = Metered(model)
        variables = {
            "task": q["question"],
            "sources": render_sources(shown, 600),
            "degraded": False,
            "insufficient": False,
        }
        try:
            outcome = await run_step(
                step, Context(objective=q["question"]), metered, variables=variables
            )
            answer = str((outcome.value or {}).get("answer", ""))
        except StepFailed:
            answer = ""
        seconds = time.perf_counter() - started
        # The baseline has no notion of "not found": it always answers.
        row = {
            "id": q["id"],
            "type": q["type"],
            "question": q["question"],
            "answer": answer,
            "status": "answered",
            "right": right(q, answer, "answered"),
            "repaired": False,
            "calls": metered.usage.calls,
            "tokens": metered.usage.total_tokens,
            "seconds": round(seconds, 2),
        }
        rows.append(row)
        print(
            f"[{n}/{len(questions)}] {'ok' if row['right'] else '--'} {seconds:5.1f}s "
            f"{q['question']} -> {answer[:80]!r}",
            file=sys.stderr,
            flush=True,
        )
    return rows


# -- reporting -----------------------------------------------------------------------


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def paired_bootstrap(
    a: list[int], b: list[int], rounds: int = 5000, seed: int = 7
) -> tuple[float, float, float]:
    """Mean of a - b with a 95% percentile interval, resampling the pairs."""
    rng = random.Random(seed)
    n = len(a)
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(rounds))
    return (sum(diffs) / n, means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1])


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| type | n | right | 95% interval | model's own | repaired | verified | unverified "
        "| not found | calls | tokens | seconds |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    types = sorted({r["type"] for r in rows})
    for t in [*types, "all"]:
        sub = [r for r in rows if t in ("all", r["type"])]
        n = len(sub)
        k = sum(r["right"] for r in sub)
        low, high = wilson(k, n)
        own = sum(r["right"] and not r["repaired"] for r in sub)
        fixed = sum(r["right"] and r["repaired"] for r in sub)
        count = {
            s: sum(r["status"] == s for r in sub) for s in ("verified", "unverified", "not_found")
        }
        name = f"**{t}**" if t == "all" else t
        lines.append(
            f"| {name} | {n} | {k} ({_pct(k / n)}) | {_pct(low)}–{_pct(high)} | {own} | {fixed} | "
            f"{count['verified']} | {count['unverified']} | {count['not_found']} | "
            f"{sum(r['calls'] for r in sub) / n:.1f} | {sum(r['tokens'] for r in sub) / n:.0f} | "
            f"{sum(r['seconds'] for r in sub) / n:.1f} |"
        )
    return lines


def paired(loop: list[dict[str, Any]], single: list[dict[str, Any]]) -> list[str]:
    by_id = {r["id"]: r for r in single}
    pairs = [(r, by_id[r["id"]]) for r in loop if r["id"] in by_id]
    lines = [
        "| questions | n | loop right | single right | difference (95% CI) | loop s/question "
        "| single s/question | ratio |",
        "|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    groups = {
        "single-hop (answerable)": lambda r: r["type"] not in (*TWO_FACTS, "unanswerable"),
        "two hops and comparisons": lambda r: r["type"] in TWO_FACTS,
        "unanswerable": lambda r: r["type"] == "unanswerable",
        "all": lambda r: True,
    }
    for name, keep in groups.items():
        sub = [(a, b) for a, b in pairs if keep(a)]
        if not sub:
            continue
        a = [int(x["right"]) for x, _ in sub]
        b = [int(y["right"]) for _, y in sub]
        mean, low, high = paired_bootstrap(a, b)
        ls = sum(x["seconds"] for x, _ in sub) / len(sub)
        ss = sum(y["seconds"] for _, y in sub) / len(sub)
        lines.append(
            f"| {name} | {len(sub)} | {_pct(sum(a) / len(a))} | {_pct(sum(b) / len(b))} | "
            f"{100 * mean:+.0f} pts ({100 * low:+.0f} to {100 * high:+.0f}) | "
            f"{ls:.1f} | {ss:.1f} | {ls / ss:.1f}× |"
        )
    return lines


def _rows(names: list[str]) -> list[dict[str, Any]]:
    """The rows of the runs `names`, judged again by `right` from the gold records. A
    question run again in a later-named run is counted once, by its latest run."""
    gold = {q["id"]: q for q in [*load("all"), *load("blind"), *load("all", user=True)]}
    latest: dict[str, dict[str, Any]] = {}
    for n in names:
        for r in json.loads((RESULTS / f"{n}.json").read_text())["rows"]:
            latest.pop(r["id"], None)
            latest[r["id"]] = r
    rows = list(latest.values())
    for r in rows:
        r["right"] = right(gold[r["id"]], r["answer"], r["status"])
    return rows


def report(args: argparse.Namespace) -> None:
    loop = _rows(args.loop)
    meta = json.loads((RESULTS / f"{args.loop[0]}.json").read_text())
    blind = meta["split"] == "blind"
    built = (
        "benchmarks/data/research_wide_blind.jsonl, built by `python benchmarks/research_wide.py "
        "build --blind`"
        if blind
        else "benchmarks/data/research_wide.jsonl, built by `python benchmarks/research_wide.py "
        "build`"
    )
    told = {
        "heldout": "the `heldout` half is never tuned on",
        "tune": "the `tune` half is the one tuned on",
        "blind": "the blind set ran once, built after the last change, and nothing was changed "
        "after it",
    }[meta["split"]]
    lines = [
        f"# Research on every answer type ({'blind set' if blind else meta['split'] + ' half'})",
        "",
        f"Model `{meta['model']}`, {meta['date']}, {meta['machine']} (shared with other work: "
        f"seconds are upper bounds). Questions: {built} "
        f"(benchmarks/guardbench/wide_questions.py); {told}.",
        "",
        "Command:",
        "",
        "```",
        *meta.get("commands", []),
        "```",
        "",
        "## The research loop, per answer type",
        "",
        "`right` counts the user's answer whatever its status (a right answer marked "
        "`unverified` is still the user's); `model's own` is right with no guard repair, "
        "`repaired` right after the synthesis guard's patch.",
        "",
        *table(loop),
    ]
    if args.single:
        single = _rows(args.single)
        lines += [
            "",
            "## Does the loop pay? Paired against one synthesis call",
            "",
            "The baseline: the same model, the top-5 BM25 sources for the question, one call "
            "of the same synthesis prompt, no guard, no status (it always answers). "
            "Difference: loop minus single, a paired bootstrap 95% interval.",
            "",
            *paired(loop, single),
            "",
            "### Single call, per type",
            "",
            *table(single),
        ]
    for extra in args.extra or []:
        name, _, title = extra.partition(":")
        lines += ["", f"## {title or name}", "", *table(_rows(name.split("+")))]
    for note in args.note or []:
        lines += ["", note]
    wrong = [r for r in loop if not r["right"]][:25]
    if wrong:
        lines += [
            "",
            "## Misses (first 25)",
            "",
            "| id | status | question | answer |",
            "|---|---|---|---|",
        ]
        for r in wrong:
            answer = r["answer"][:90].replace("|", "/").replace("\n", " ")
            lines.append(f"| {r['id']} | {r['status']} | {r['question']} | {answer} |")
    (RESULTS / f"{args.name}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(table(loop)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--check", action="store_true")
    b.add_argument("--blind", action="store_true", help="the blind set (another seed)")
    r = sub.add_parser("run")
    r.add_argument("--split", choices=("tune", "heldout", "blind"), required=True)
    r.add_argument("--types", nargs="*")
    r.add_argument("--per-type", type=int, default=None)
    r.add_argument("--offset", type=int, default=0, help="skip this many of each type (pieces)")
    r.add_argument("--model", default="embedded")
    r.add_argument("--baseline", action="store_true")
    r.add_argument(
        "--user-corpus",
        action="store_true",
        help="the invented documents added as a user corpus (guardbench/user_corpus.py)",
    )
    r.add_argument("--name", required=True)
    p = sub.add_parser("report")
    p.add_argument("--loop", nargs="+", required=True)
    p.add_argument("--single", nargs="*")
    p.add_argument("--name", required=True)
    p.add_argument("--extra", nargs="*", help="NAME[+NAME]:TITLE, another run's table appended")
    p.add_argument("--note", nargs="*", help="a paragraph appended (which code ran, ...)")
    args = parser.parse_args()
    if args.command == "build":
        made = blind_questions() if args.blind else build_questions()
        target = BLIND if args.blind else DATA
        text = "".join(json.dumps(q.record(), ensure_ascii=False) + "\n" for q in made)
        if args.check:
            sys.exit(0 if target.read_text(encoding="utf-8") == text else 1)
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target} ({text.count(chr(10))} questions)")
        return
    if args.command == "report":
        report(args)
        return
    questions = _per_type(
        load(args.split, args.types, user=args.user_corpus), args.per_type, args.offset
    )
    runner = run_single if args.baseline else run_loop
    rows = asyncio.run(runner(questions, args.model, args.user_corpus))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(
        json.dumps(
            {
                "split": args.split,
                "model": args.model,
                "date": time.strftime("%Y-%m-%d"),
                "machine": f"{platform.machine()}, {platform.python_version()}",
                "commands": ["python benchmarks/research_wide.py " + " ".join(sys.argv[1:])],
                "rows": rows,
            },
            indent=1,
            ensure_ascii=False,
        )
    )
    print("\n".join(table(rows)))


if __name__ == "__main__":
    main()
