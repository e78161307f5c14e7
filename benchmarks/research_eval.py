"""Evaluate the research loop on questions built from the embedded Wikipedia corpus.

Questions come from article descriptions ("1937 painting by Pablo Picasso" ->
"Who painted Guernica?", answer "Picasso"), kept only when the answer is stated
in the article's own summary, so every question is answerable from the corpus.

Metrics per question and overall:
- retrieval recall@1 / @5: the question's article is among the top 1 / 5 retrieved
  sources (ranked by reciprocal rank fusion over the run's queries);
- answer accuracy: the expected answer (a surname or a country) occurs in the answer;
- citation precision: share of the ids the model cited that were retrieved sources
  (target 100%), and share of cited ids that survived support verification;
- cited-the-article: the question's own article is among the verified sources;
- iterations and seconds per question; model calls and tokens.

A retrieval-only pass (no model) scores BM25 recall on every generated question.

`--set second` runs the second evaluation set instead (benchmarks/data/
research_questions.jsonl, built by benchmarks/build_sets.py: description -> title and
distinctive fact -> title questions, answered by the article's title), on one half:
`--split tune` (may be tuned on) or `--split heldout` (never tuned on).

    python benchmarks/research_eval.py --model embedded --limit 23
    python benchmarks/research_eval.py --retrieval-only
    python benchmarks/research_eval.py --set second --split tune --retrieval-only
    flock /tmp/gs-model.lock python benchmarks/research_eval.py --set second --split tune
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import re
import statistics
import sys
import time
import unicodedata
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from guardsearch.core.source import Source
from guardsearch.core.steering import Steering
from guardsearch.corpus import open_index, wikipedia
from guardsearch.loops.research import AgentResponse, ResearchConfig, ResearchLoop
from guardsearch.loops.research.config import default_budget
from guardsearch.models.spec import model_from_spec
from guardsearch.tools import CorpusProvider

RESULTS = Path(__file__).parent / "results"
SECOND_SET = Path(__file__).parent / "data" / "research_questions.jsonl"
FRESH_SET = Path(__file__).parent / "data" / "research_questions_fresh.jsonl"
ANCHOR = "A Sunday Afternoon on the Island of La Grande Jatte"

_WORK = re.compile(
    r"^(?:\d{4} )?(?:[\w\- ]+ )?(?P<kind>(?i:painting|novel|opera|film|play|poem|ballet))s? "
    r"(?:by|directed by|written by) (?P<who>[A-Z][\w.' \-]+)$"
)
_CAPITAL = re.compile(r"^Capital (?:city )?of (?:the )?(?P<where>[A-Z][\w ]+)$")
_QUESTION = {
    "painting": "Who painted {title}?",
    "novel": "Who wrote the novel {title}?",
    "film": "Who directed the film {title}?",
    "opera": "Who composed the opera {title}?",
    "play": "Who wrote the play {title}?",
    "poem": "Who wrote the poem {title}?",
    "ballet": "Who composed the ballet {title}?",
}
# How many of each kind go into the model evaluation (the anchor question comes first).
_MIX = {
    "painting": 4,
    "novel": 4,
    "film": 3,
    "opera": 3,
    "play": 2,
    "poem": 2,
    "ballet": 1,
    "capital": 3,
}


@dataclass(frozen=True)
class Question:
    question: str
    expected: str
    article: str
    kind: str


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()


def build_questions() -> list[Question]:
    """Every question the templates can make and the summaries can answer."""
    data = json.loads(wikipedia.require_data_path().read_text(encoding="utf-8"))
    out = []
    for title, entry in sorted(data.items()):
        desc = (entry.get("description") or "").strip()
        extract = entry.get("extract") or ""
        shown = re.sub(r"\s*\([^)]*\)$", "", title)  # "Guernica (Picasso)" -> "Guernica"
        if m := _WORK.match(desc):
            answer = m.group("who").split()[-1]
            kind = m.group("kind").lower()
            question = _QUESTION[kind].format(title=shown)
        elif m := _CAPITAL.match(desc):
            answer = m.group("where").split(",")[0].strip()
            question = f"{shown} is the capital of which country or region?"
            kind = "capital"
        else:
            continue
        if _fold(answer) in _fold(extract):
            out.append(Question(question=question, expected=answer, article=title, kind=kind))
    return out


async def top_sources(provider: CorpusProvider, question: str, k: int = 5) -> dict[str, Source]:
    """The `k` best sources for `question`, numbered "[1]", "[2]", ... as the research
    loop numbers what it retrieves (the offline checks judge drafts against them)."""
    hits = await provider.search(question, k)
    return {f"[{i}]": replace(h, id=f"[{i}]") for i, h in enumerate(hits, 1)}


def second_set(split: str, path: Path = SECOND_SET) -> list[Question]:
    """The second evaluation set's questions of `split` (tune, heldout or all); with
    `path=FRESH_SET`, the fresh held-out set of the same shapes (all held out)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [
        Question(
            question=r["question"], expected=r["expected"], article=r["article"], kind=r["kind"]
        )
        for r in rows
        if split in ("all", r["split"])
    ]


def model_set(questions: list[Question], limit: int) -> list[Question]:
    anchor = [q for q in questions if q.article == ANCHOR]
    rng = random.Random(2024)
    chosen = list(anchor)
    for kind, n in _MIX.items():
        pool = [q for q in questions if q.kind == kind and q not in chosen]
        chosen += rng.sample(pool, min(n, len(pool)))
    return chosen[:limit]


def retrieval_only(questions: list[Question]) -> dict[str, Any]:
    index = open_index()
    at1 = at5 = 0
    for q in questions:
        titles = [h.title for h in index.search(q.question, 5, corpus="wikipedia")]
        at1 += bool(titles) and titles[0] == q.article
        at5 += q.article in titles
    n = len(questions)
    return {"questions": n, "recall_at_1": round(at1 / n, 3), "recall_at_5": round(at5 / n, 3)}


async def evaluate(
    questions: list[Question], spec: str, config: ResearchConfig, traces: Path | None = None
) -> list[dict[str, Any]]:
    """Run each question; with `traces`, every run's events go to that JSONL file (one
    line per event, with the question's number), so a failure can be read afterwards."""
    model = model_from_spec(spec)
    if traces is not None:
        traces.parent.mkdir(parents=True, exist_ok=True)
        traces.write_text("")
    loop = ResearchLoop(model=model, providers=[CorpusProvider(corpus="wikipedia")], config=config)
    rows = []
    for number, q in enumerate(questions, 1):
        started = time.perf_counter()
        run = await loop.run(q.question)
        seconds = time.perf_counter() - started
        if traces is not None:
            with traces.open("a", encoding="utf-8") as out:
                for event in run.trace.events:
                    record = {"question": number, **event.as_dict()}
                    out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        ranked = [r.title for r in run.state.ranked()]
        row: dict[str, Any] = {
            **asdict(q),
            "seconds": round(seconds, 1),
            "iterations": run.state.iteration,
            "calls": run.usage.calls,
            "tokens": run.usage.total_tokens,
            "recall_at_1": bool(ranked) and ranked[0] == q.article,
            "recall_at_5": q.article in ranked[:5],
            "retrieved": q.article in ranked,
            # How feedback steered the synthesis (core/steering.py, from the run's trace).
            "synthesize_steering": Steering.from_events(
                run.trace.events, step="research-synthesize"
            ).as_dict(),
        }
        response = run.response
        if isinstance(response, AgentResponse):
            cited = run.verification.cited if run.verification else ()
            retrieved_ids = {r.id for r in run.state.search_results}
            row.update(
                ok=True,
                answer=response.final_answer,
                correct=_fold(q.expected) in _fold(response.final_answer),
                cited=len(cited),
                cited_retrieved=sum(1 for c in cited if c in retrieved_ids),
                cited_verified=len(response.citations.verified),
                cited_article=any(s.title == q.article for s in response.sources),
                tier=response.tier,
                stop=response.stop_reason,
            )
        else:
            row.update(
                ok=False,
                answer="",
                correct=False,
                cited=0,
                cited_retrieved=0,
                cited_verified=0,
                cited_article=False,
                error=response.error.type,
                message=response.error.message[:200],
                discarded_correct=_fold(q.expected) in _fold(_refused_answer(response)),
            )
        rows.append(row)
        mark = "ok " if row["correct"] else "-- "
        print(
            f"[{number}/{len(questions)}] {mark}{seconds:5.1f}s it={row['iterations']} "
            f"{q.question} -> {row.get('answer', '')[:90]!r}",
            file=sys.stderr,
            flush=True,
        )
    return rows


def _refused_answer(response: Any) -> str:
    """The answer an error response threw away (a refused or failed synthesis), if any."""
    details = response.error.details or {}
    said = details.get("answer") or details.get("last_output") or ""
    return str(said)


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    cited = sum(r["cited"] for r in rows)
    synth = [Steering.from_dict(r.get("synthesize_steering")) for r in rows]
    total = sum(synth, Steering())
    return {
        "questions": n,
        "answered": sum(r["ok"] for r in rows),
        "answer_accuracy": round(sum(r["correct"] for r in rows) / n, 3),
        "recall_at_1": round(sum(r["recall_at_1"] for r in rows) / n, 3),
        "recall_at_5": round(sum(r["recall_at_5"] for r in rows) / n, 3),
        "citation_precision_retrieved": round(sum(r["cited_retrieved"] for r in rows) / cited, 3)
        if cited
        else None,
        "citation_precision_verified": round(sum(r["cited_verified"] for r in rows) / cited, 3)
        if cited
        else None,
        "cited_the_article": round(sum(r["cited_article"] for r in rows) / n, 3),
        "iterations_mean": round(statistics.mean(r["iterations"] for r in rows), 2),
        "seconds_mean": round(statistics.mean(r["seconds"] for r in rows), 1),
        "seconds_median": round(statistics.median(r["seconds"] for r in rows), 1),
        "calls_mean": round(statistics.mean(r["calls"] for r in rows), 2),
        "tokens_mean": round(statistics.mean(r["tokens"] for r in rows)),
        "errors": sorted({r.get("error", "") for r in rows} - {""}),
        "cited_unretrieved": sum(r["cited"] - r["cited_retrieved"] for r in rows),
        "correct_discarded": sum(bool(r.get("discarded_correct")) for r in rows),
        "synthesize_steering": total.as_dict(),
    }


def markdown(report: dict[str, Any]) -> str:
    s = report["summary"]
    r = report["retrieval_only"]
    lines = [
        f"# Research loop evaluation ({report['model']})",
        "",
        f"{report['date']}, {report['machine']}. Config: {report['config']}.",
        _about(report.get("set", "first")),
        "",
        "| metric | value |",
        "|---|---|",
        f"| questions (model run) | {s['questions']} |",
        f"| answered (not an ErrorResponse) | {s['answered']} |",
        f"| answer accuracy | {s['answer_accuracy']:.0%} |",
        f"| retrieval recall@1 / @5 (in the loop) | {s['recall_at_1']:.0%} / "
        f"{s['recall_at_5']:.0%} |",
        f"| citation precision: cited ids that were retrieved | "
        f"{_pct(s['citation_precision_retrieved'])} |",
        f"| citation precision: cited ids that passed support verification | "
        f"{_pct(s['citation_precision_verified'])} |",
        f"| answers citing the question's own article | {s['cited_the_article']:.0%} |",
        f"| iterations per question (mean) | {s['iterations_mean']} |",
        f"| seconds per question (mean / median) | {s['seconds_mean']} / {s['seconds_median']} |",
        f"| model calls / tokens per question (mean) | {s['calls_mean']} / {s['tokens_mean']} |",
        f"| retrieval only, BM25 on all {r['questions']} generated questions: recall@1 / @5 | "
        f"{r['recall_at_1']:.0%} / {r['recall_at_5']:.0%} |",
        *_steering_rows(s),
        "",
        "Sources never come from the model: ids are resolved by code, so a cited id that "
        "was not retrieved is removed and reported (that is what keeps the first precision "
        "row at 100%); the second row counts what also passed the lexical support check.",
        "",
        "| # | question | expected | correct | cited article | iters | s | answer / error |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for i, row in enumerate(report["rows"], 1):
        said = row.get("answer") or f"{row.get('error')}: {row.get('message', '')}"
        said = said.replace("|", "/").replace("\n", " ")[:140]
        lines.append(
            f"| {i} | {row['question']} | {row['expected']} | "
            f"{'yes' if row['correct'] else 'no'} | {'yes' if row['cited_article'] else 'no'} | "
            f"{row['iterations']} | {row['seconds']} | {said} |"
        )
    return "\n".join(lines) + "\n"


def _steering_rows(s: dict[str, Any]) -> list[str]:
    if "synthesize_steering" not in s:
        return []  # a report written before these were counted
    st = s["synthesize_steering"]
    return [
        f"| cited ids that were not retrieved (count) | {s['cited_unretrieved']} |",
        f"| correct answers discarded (an error response whose answer was right) | "
        f"{s['correct_discarded']} |",
        f"| synthesize outputs / repeats (share) / repairs / prevented | {st['outputs']} / "
        f"{st['repeats']} ({st['repeat_share']:.0%}) / {st['repairs']} / {st['prevented']} |",
    ]


def _about(which: str) -> str:
    if which == "first":
        return (
            "Questions are built from the embedded Wikipedia summaries "
            "(`benchmarks/research_eval.py`); each is answerable from its article's summary."
        )
    if which == "fresh":
        return (
            "The fresh held-out set: 60 questions of the second set's two shapes "
            "(description -> title, distinctive fact -> title) on articles no other set "
            "uses, built with another seed (`benchmarks/data/research_questions_fresh.jsonl`, "
            "CC BY-SA 4.0, built by `benchmarks/build_sets.py`); nothing was tuned on it."
        )
    return (
        f"The second evaluation set ({which}): description -> title and distinctive fact -> "
        "title questions from the embedded Wikipedia summaries "
        "(`benchmarks/data/research_questions.jsonl`, CC BY-SA 4.0, built by "
        "`benchmarks/build_sets.py`); the answer is the article's title."
    )


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="embedded")
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        help="questions (default: 23 of the first set, every question of a --set second split)",
    )
    parser.add_argument(
        "--offset", type=int, default=0, help="skip this many questions (run in pieces)"
    )
    parser.add_argument("--tier", default="auto")
    parser.add_argument("--name", default="research_embedded")
    parser.add_argument("--retrieval-only", action="store_true")
    parser.add_argument(
        "--set",
        choices=("first", "second", "fresh"),
        default="first",
        help="fresh: 60 more questions of the second set's shapes, all held out",
    )
    parser.add_argument(
        "--split",
        choices=("tune", "heldout", "all"),
        default="tune",
        help="with --set second: which half (heldout: never tuned on)",
    )
    parser.add_argument(
        "--traces",
        type=Path,
        default=None,
        help="write every run's trace events to this JSONL file (for reading failures)",
    )
    parser.add_argument(
        "--merge",
        nargs="+",
        metavar="NAME",
        help="join the reports NAME.json of pieces (--offset/--limit runs) into --name",
    )
    parser.add_argument(
        "--render",
        nargs="+",
        metavar="NAME",
        help="write NAME.md again from the committed NAME.json (no model run)",
    )
    args = parser.parse_args()
    if args.merge:
        merge(args.merge, args.name)
        return
    if args.render:
        for name in args.render:
            report = json.loads((RESULTS / f"{name}.json").read_text())
            (RESULTS / f"{name}.md").write_text(markdown(report))
        return
    if args.set == "first":
        questions = build_questions()
    elif args.set == "fresh":
        questions = second_set("heldout", FRESH_SET)
    else:
        questions = second_set(args.split)
    retrieval = retrieval_only(questions)
    print(f"retrieval only: {retrieval}", file=sys.stderr)
    if args.retrieval_only:
        return
    config = ResearchConfig.from_env(tier=args.tier)
    budget = default_budget().allowance
    if args.set == "first":
        chosen = model_set(questions, args.limit or 23)
        name = args.name
    else:
        rest = questions[args.offset :]
        chosen = rest[: args.limit] if args.limit else rest
        default = f"research_{args.set}_{args.split}" if args.set == "second" else "research_fresh"
        name = args.name if args.name != "research_embedded" else default
    rows = asyncio.run(evaluate(chosen, args.model, config, args.traces))
    report = {
        "set": f"second, {args.split} half" if args.set == "second" else args.set,
        "model": args.model,
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {_cpus()} CPU(s), Python {platform.python_version()}",
        "config": f"tier={args.tier}, support={config.support}, "
        f"max_execution_time_s={budget.seconds}, "
        f"token_budget={budget.tokens}",
        "summary": summarise(rows),
        "retrieval_only": retrieval,
        "rows": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(report, indent=2, ensure_ascii=False))
    (RESULTS / f"{name}.md").write_text(markdown(report))
    print(json.dumps(report["summary"], indent=2))


def merge(names: list[str], name: str) -> None:
    """One report from the pieces of a run (same set, model and config), rows in order."""
    pieces = [json.loads((RESULTS / f"{n}.json").read_text()) for n in names]
    report = {**pieces[0], "rows": [row for piece in pieces for row in piece["rows"]]}
    report["pieces"] = names
    report["summary"] = summarise(report["rows"])
    (RESULTS / f"{name}.json").write_text(json.dumps(report, indent=2, ensure_ascii=False))
    (RESULTS / f"{name}.md").write_text(markdown(report))
    print(json.dumps(report["summary"], indent=2))


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


if __name__ == "__main__":
    main()
