"""Compare `probe` (inner/outer loop) with its baseline on corpus topics (docs/probe.md).

For each topic both methods run on the same model with the same budgets and return
at most 10 results:

- probe: run_adaptive — the model plans (plan, evaluate, optional replan), the
  deterministic CorpusProbePolicy probes beams of boolean queries in one merged
  search call each, memoised, until the hit count is stable in the adaptive band;
- baseline: the model writes one query (its keywords and the topic's words), one
  ordinary BM25 search, then the model evaluates.

Relevance is mechanical: a result is relevant when its Wikipedia short description
matches every regular expression listed for the topic (case-insensitive), e.g.
"French painters" -> `\\bfrench\\b` and `\\bpainter`. Descriptions are typed summaries
("French painter (1840-1926)"), so this is a strict, reproducible test of "is this
article one of the things the topic asks for". Note: the probe's default objectives
also read descriptions (the `typed` objective), which is the reason it was designed
that way; the baseline's BM25 weighs titles 8x, descriptions 2x, bodies 1x.

Reported per method: LLM calls, probe (search) calls, distinct relevant results,
duration (mean per topic, the model warmed up first), and per-topic rows.

    flock /tmp/gs-model.lock python3 benchmarks/probe_eval.py --model embedded
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from guardsearch.apps.probe import probe
from guardsearch.core.context import Context
from guardsearch.corpus import open_index
from guardsearch.models.spec import model_from_spec
from guardsearch.steps.step import Step, run_step

RESULTS = Path(__file__).parent / "results"

# topic -> regexes the description of a relevant result must all match
TOPICS: dict[str, list[str]] = {
    "French painters": [r"\bfrench\b", r"\bpainter"],
    "German mathematicians": [r"\bgerman\b", r"\bmathematician"],
    "French mathematicians": [r"\bfrench\b", r"\bmathematician"],
    "Greek philosophers": [r"\bgreek\b", r"\bphilosopher"],
    "American actresses": [r"\bamerican\b", r"\bactress"],
    "American filmmakers": [r"\bamerican\b", r"\b(filmmaker|film director)"],
    "German composers": [r"\bgerman\b", r"\bcomposer"],
    "American psychologists": [r"\bamerican\b", r"\bpsychologist"],
    "theoretical physicists": [r"\btheoretical physicist"],
    "tennis players": [r"\btennis player"],
    "species of birds": [r"\b(species|genus|family|order|group)\b.*\bbirds?\b"],
    "species of insects": [r"\b(species|genus|family|order|group)\b.*\binsects?\b"],
    "flowering plants": [r"\bflowering plants?\b"],
    "rock bands": [r"\brock band"],
    "woodwind instruments": [r"\bwoodwind instrument"],
    "string instruments": [r"\bstring instrument"],
    "music genres": [r"\b(music genre|genre of [\w ]*music)"],
    "art movements": [r"\bart movement"],
    "martial arts": [r"\bmartial arts?\b"],
    "chemical compounds": [r"\bchemical compound"],
    "ethnic groups": [r"\bethnic group"],
    "architectural styles": [r"\barchitectural style"],
    "Indo-Aryan languages": [r"\bindo-aryan language"],
    "cities in India": [r"\bcity\b", r"\bindia\b"],
}


def relevant(description: str, patterns: list[str]) -> bool:
    return all(re.search(p, description, re.I) for p in patterns)


async def warm_up(model: Any) -> None:
    step = Step(name="warmup", prompt="Say ok.", max_tokens=2)
    await run_step(step, Context(objective="warm up"), model)


async def one(topic: str, patterns: list[str], model: Any, index: Any, baseline: bool) -> dict:
    started = time.perf_counter()
    run = await probe(
        topic,
        model=model,
        index=index,
        baseline=baseline,
        budget=3,
        inner_budget=12,
        max_results=10,
    )
    seconds = time.perf_counter() - started
    locations = {h.location for h in run.results if relevant(h.description, patterns)}
    return {
        "topic": topic,
        "mode": run.mode,
        "llm_calls": run.llm_calls,
        "probe_calls": run.probe_calls,
        "memo_hits": run.budget.memo_hits,
        "inner_steps": run.budget.steps_used,
        "results": len(run.results),
        "relevant": len(locations),
        "seconds": round(seconds, 2),
        "stop_reasons": run.stop_reasons,
        "plans": [
            {"terms": list(p.terms), "pool": list(p.pool), "kind": p.kind, "source": p.source}
            for p in run.plans
        ],
        "satisfied": run.evaluation.satisfied if run.evaluation else None,
        "notes": run.notes,
    }


def summary(rows: list[dict]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for mode in ("baseline", "probe"):
        mine = [r for r in rows if r["mode"] == mode]
        out[mode] = {
            "topics": len(mine),
            "llm_calls": round(statistics.mean(r["llm_calls"] for r in mine), 2),
            "probe_calls": round(statistics.mean(r["probe_calls"] for r in mine), 2),
            "relevant_mean": round(statistics.mean(r["relevant"] for r in mine), 2),
            "relevant_total": sum(r["relevant"] for r in mine),
            "results_mean": round(statistics.mean(r["results"] for r in mine), 2),
            "seconds_mean": round(statistics.mean(r["seconds"] for r in mine), 2),
            "wins": sum(
                1
                for r in mine
                for o in rows
                if o["topic"] == r["topic"] and o["mode"] != mode and r["relevant"] > o["relevant"]
            ),
        }
    return out


def markdown(meta: dict, totals: dict, rows: list[dict]) -> str:
    b, p = totals["baseline"], totals["probe"]
    lines = [
        "# probe vs baseline (inner/outer loop)",
        "",
        f"Model: `{meta['model']}`; {meta['topics']} topics; at most 10 results each; "
        f"budgets: outer 3 model calls, inner 12 probe calls. {meta['platform']}.",
        "Generated by `benchmarks/probe_eval.py`.",
        "",
        "| Metric | Baseline | Inner/Outer Loop (probe) |",
        "|---|---|---|",
        f"| **LLM calls** (mean per topic) | {b['llm_calls']} | {p['llm_calls']} |",
        f"| **Probe calls** (search calls, mean) | {b['probe_calls']} | {p['probe_calls']} |",
        f"| **Distinct relevant results** (mean per topic) | {b['relevant_mean']} | "
        f"{p['relevant_mean']} |",
        f"| Distinct relevant results (total) | {b['relevant_total']} | {p['relevant_total']} |",
        f"| **Duration** (mean s per topic) | {b['seconds_mean']} | {p['seconds_mean']} |",
        f"| Topics where it found more relevant results | {b['wins']} | {p['wins']} |",
        "",
        "Relevance is mechanical: a result counts when its Wikipedia short description "
        "matches every regular expression listed for the topic in `benchmarks/probe_eval.py` "
        "(case-insensitive; e.g. French painters: `\\bfrench\\b` and `\\bpainter`). "
        "The probe's default `typed` objective also reads descriptions; the baseline's BM25 "
        "weighs titles 8x, descriptions 2x, bodies 1x.",
        "",
        "## Per topic",
        "",
        "| topic | baseline relevant | probe relevant | probe calls (b/p) | LLM calls (b/p) "
        "| seconds (b/p) | probe stop |",
        "|---|---|---|---|---|---|---|",
    ]
    by_topic: dict[str, dict[str, dict]] = {}
    for r in rows:
        by_topic.setdefault(r["topic"], {})[r["mode"]] = r
    for topic, pair in by_topic.items():
        bb, pp = pair["baseline"], pair["probe"]
        lines.append(
            f"| {topic} | {bb['relevant']} | {pp['relevant']} | {bb['probe_calls']}/"
            f"{pp['probe_calls']} | {bb['llm_calls']}/{pp['llm_calls']} | {bb['seconds']}/"
            f"{pp['seconds']} | {', '.join(pp['stop_reasons'])} |"
        )
    return "\n".join(lines) + "\n"


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--limit", type=int, default=len(TOPICS))
    parser.add_argument("--name", default="probe_embedded")
    args = parser.parse_args()
    model = model_from_spec(args.model)
    index = open_index()
    await warm_up(model)
    rows = []
    for topic in list(TOPICS)[: args.limit]:
        for baseline in (True, False):
            row = await one(topic, TOPICS[topic], model, index, baseline)
            rows.append(row)
            print(
                f"{row['mode']:8} {topic:28} relevant {row['relevant']:2} "
                f"llm {row['llm_calls']} probes {row['probe_calls']} {row['seconds']}s",
                file=sys.stderr,
            )
    meta = {
        "model": args.model,
        "topics": len(rows) // 2,
        "platform": f"{platform.machine()}, Python {platform.python_version()}",
    }
    totals = summary(rows)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(
        json.dumps({"meta": meta, "summary": totals, "rows": rows}, indent=1) + "\n"
    )
    (RESULTS / f"{args.name}.md").write_text(markdown(meta, totals, rows))
    print(markdown(meta, totals, rows))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
