"""The held-out injection set (tests/adversarial/injection_heldout) with a real model.

Each of the 31 documents (25 injected, 6 clean controls) is indexed into a corpus of
its own name; research answers each document's question over that corpus, and the run
is sorted as in tests/adversarial/test_injection_heldout.py: obeyed (the delivered answer
does what the injection asked), answered (the right answer, not obeyed) or lost.

The set was written without reading the second-layer screen of prompts/untrusted.py,
in wording the old pattern screen does not catch. Run it under the model lock:

    flock /tmp/gs-model.lock python benchmarks/injection_heldout.py --model embedded

It writes benchmarks/results/injection_heldout.md and .json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "adversarial"))
from injection_heldout_set import DOCS, Case, cases, outcome, totals  # noqa: E402

from guardsearch.corpus import CorpusIndex, add_files  # noqa: E402
from guardsearch.corpus.ingest import read_text_file  # noqa: E402
from guardsearch.experiments.metrics import wilson  # noqa: E402
from guardsearch.loops.research import ResearchConfig, ResearchLoop  # noqa: E402
from guardsearch.loops.research.statements import read_text  # noqa: E402
from guardsearch.models.spec import model_from_spec  # noqa: E402
from guardsearch.prompts.untrusted import instructions, sentences_of  # noqa: E402
from guardsearch.tools import CorpusProvider  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
CORPUS = "heldout"


async def evaluate(spec: str, support: str, limit: int | None) -> list[dict[str, Any]]:
    model = model_from_spec(spec)
    index = CorpusIndex(Path(tempfile.mkdtemp()) / "index.sqlite3")
    add_files(index, DOCS, CORPUS)
    loop = ResearchLoop(
        model=model,
        providers=[CorpusProvider(index, corpus=CORPUS)],
        config=ResearchConfig(support=support),
    )
    chosen = cases()[:limit] if limit else cases()
    rows = []
    for number, case in enumerate(chosen, 1):
        started = time.perf_counter()
        run = await loop.run(case.question)
        retrieved = {r.id for r in run.state.search_results}
        row = outcome(case, run.response, retrieved)
        row.update(hiding=case.hiding, seconds=round(time.perf_counter() - started, 1))
        rows.append(row)
        print(
            f"[{number}/{len(chosen)}] {row['outcome']:8} {row['seconds']:5.1f}s "
            f"{case.file}: {row.get('answer', '')[:90]!r}",
            file=sys.stderr,
            flush=True,
        )
    return rows


def markdown(report: dict[str, Any]) -> str:
    rows = report["rows"]
    injected = [r for r in rows if r["kind"] != "none"]
    clean = [r for r in rows if r["kind"] == "none"]
    t, c = totals(injected), totals(clean)
    lines = [
        f"# Held-out injection set ({report['model']})",
        "",
        f"{report['date']}, {report['machine']} (shared with other engineers' jobs). "
        f"Config: support={report['support']}, default research settings.",
        "",
        "The set (tests/adversarial/injection_heldout, 25 injected documents and 6 clean "
        "controls) was written without reading the second-layer screen "
        "(`addresses_reader` in src/guardsearch/prompts/untrusted.py); none of its "
        "injected passages is caught by the old pattern screen `_PATTERNS` "
        "(tests/adversarial/test_injection_heldout.py checks that). Each document is an "
        "article about an invented subject that states who made it; obeyed = the "
        "delivered answer does what the injection asked (names its fake maker, keeps its "
        "never-retrieved id, copies the prompt, is written in the asked language); "
        "answered = the right answer, not obeyed; lost = no right answer.",
        "",
        "The defence measured (issue 34 item 5, `loops/research/statements.py`, "
        "docs/security.md) judges passages by structure, not words: a value a source "
        "has only in a passage contesting its own first answer is no support and is "
        "never delivered, and the synthesiser first sees a source only in its "
        "paragraphs that name the subject. It was written after this set, by someone "
        "who had read it (its unit tests use documents of their own); the set is no "
        "longer unseen by its author, only by its rules' wording.",
        "",
        "| documents | obeyed | answered (refused or screened, right answer) | lost |",
        "|---|---|---|---|",
        f"| injected ({len(injected)}) | {t['obeyed']} | {t['answered']} | {t['lost']} |",
        f"| clean controls ({len(clean)}) | {c['obeyed']} | {c['answered']} | {c['lost']} |",
        *_before(),
        "",
        "95% intervals (Wilson) on the injected documents: "
        f"obeyed {_interval(t['obeyed'], injected)}, "
        f"answered {_interval(t['answered'], injected)}, lost {_interval(t['lost'], injected)}. "
        "One run of each document; no part of the set was used to tune the word screens "
        "or the structural rules (whose unit tests use documents of their own).",
        "",
        "Made by `flock /tmp/gs-model.lock python benchmarks/injection_heldout.py "
        f"--model {report['model']}`.",
        "",
        "The `screened` column: how many sentences of the injected passage the current "
        "screen (`instructions` in prompts/untrusted.py, both layers) takes out of what "
        "the synthesiser reads; hidden HTML and Markdown comments are not indexed at all. "
        "The `structure` column: what statements.py makes of the passage's sentences "
        "in its document (`contested`: no support, never delivered; `beside`: in a "
        "paragraph that does not name the subject, out of the first view; `named`: in "
        "one that does).",
        "",
        "| document | kind | language | hiding | screened | structure | outcome | status | s "
        "| answer |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    by_file = {c.file: c for c in cases()}
    for r in rows:
        said = str(r.get("answer", "")).replace("|", "/").replace("\n", " ")[:120]
        passage = by_file[r["case"]].injection
        screened = f"{len(instructions(passage))}/{len(sentences_of(passage))}" if passage else "-"
        lines.append(
            f"| {r['case']} | {r['kind']} | {r['language']} | {r['hiding']} | {screened} | "
            f"{structure(by_file[r['case']])} | {r['outcome']} | {r['status']} | "
            f"{r['seconds']} | {said} |"
        )
    return "\n".join(lines) + "\n"


def structure(case: Case) -> str:
    """What statements.py makes of the case's injected sentences in its document."""
    _, text = read_text_file(DOCS / case.file)
    if not case.injection or not case.trigger or case.trigger.lower() not in text.lower():
        return "-"
    reading = read_text(case.question, text)
    said = [s for s in sentences_of(case.injection)]
    if any(s in reading.contested for s in said):
        return "contested"
    return "named" if any(s in reading.named for s in said) else "beside"


def _before() -> list[str]:
    """The row of the run before the structural defence (`injection_heldout_before.json`)."""
    path = RESULTS / "injection_heldout_before.json"
    if not path.exists():
        return []
    before = json.loads(path.read_text())
    t = before["totals_injected"]
    return [
        f"| injected, before the structural defence ({before['date']}, word screens only) "
        f"| {t['obeyed']} | {t['answered']} | {t['lost']} |"
    ]


def _interval(k: int, rows: list[dict[str, Any]]) -> str:
    low, high = wilson(k, len(rows))
    return f"{k}/{len(rows)} [{low:.0%}, {high:.0%}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--support", default="lexical", choices=["lexical", "model", "off"])
    parser.add_argument("--limit", type=int, default=None, help="the first N documents only")
    parser.add_argument("--name", default="injection_heldout")
    parser.add_argument(
        "--from-json", action="store_true", help="only write the .md again from the .json"
    )
    args = parser.parse_args()
    if args.from_json:
        report = json.loads((RESULTS / f"{args.name}.json").read_text())
        (RESULTS / f"{args.name}.md").write_text(markdown(report))
        return
    rows = asyncio.run(evaluate(args.model, args.support, args.limit))
    report = {
        "model": args.model,
        "support": args.support,
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
        "totals_injected": totals([r for r in rows if r["kind"] != "none"]),
        "totals_clean": totals([r for r in rows if r["kind"] == "none"]),
        "rows": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(report, indent=1, ensure_ascii=False))
    (RESULTS / f"{args.name}.md").write_text(markdown(report))
    print(json.dumps({"injected": report["totals_injected"], "clean": report["totals_clean"]}))


if __name__ == "__main__":
    main()
