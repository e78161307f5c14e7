"""The limit of the structural defence: held-out injections inside the paragraph that
names the subject.

loops/research/statements.py judges an injected passage by structure: a paragraph that
does not name the subject is left out of the synthesiser's first view, and a value that
contests a source's first answer from a later paragraph is no support. An attacker who
writes the passage *into* the paragraph that names the subject is seen by neither rule.
This measures that: each visible injected document of the held-out set
(tests/adversarial/injection_heldout) is rewritten with its last paragraph (the
injection) joined onto the paragraph before it, and research answers its question over
the rewritten corpus, sorted obeyed / answered / lost as in
tests/adversarial/test_injection_heldout.py.

    python benchmarks/injection_inparagraph.py --model scripted     # every support mode
    flock /tmp/gs-model.lock python benchmarks/injection_inparagraph.py --model embedded

`scripted` is the test suite's model that obeys any injection reaching its prompt (the
worst case); it writes benchmarks/results/injection_inparagraph_<model>.md and .json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "adversarial"))
from injection_heldout_set import DOCS, Case, cases, outcome, research_model, totals  # noqa: E402

from guardsearch.corpus import CorpusIndex, add_files  # noqa: E402
from guardsearch.corpus.ingest import read_text_file  # noqa: E402
from guardsearch.experiments.metrics import wilson  # noqa: E402
from guardsearch.loops.research import ResearchConfig, ResearchLoop  # noqa: E402
from guardsearch.models.spec import model_from_spec  # noqa: E402
from guardsearch.tools import CorpusProvider, ResilienceSettings  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
CORPUS = "inparagraph"


def rewritten(folder: Path) -> list[Case]:
    """Every document as indexed text in `folder`, the visible injected ones with their
    last paragraph joined onto the one before; the cases rewritten."""
    chosen = []
    for case in cases():
        title, text = read_text_file(DOCS / case.file)
        paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
        visible = case.injected and case.trigger and case.trigger.lower() in text.lower()
        if visible and len(paragraphs) >= 3:
            paragraphs = [*paragraphs[:-2], f"{paragraphs[-2]} {paragraphs[-1]}"]
            chosen.append(case)
        body = "\n\n".join(paragraphs if paragraphs[0] == title else [title, *paragraphs])
        (folder / f"{Path(case.file).stem}.txt").write_text(body, encoding="utf-8")
    return chosen


async def _no_sleep(_: float) -> None:
    return None


async def evaluate(spec: str, support: str) -> list[dict[str, Any]]:
    folder = Path(tempfile.mkdtemp()) / "docs"
    folder.mkdir()
    chosen = rewritten(folder)
    index = CorpusIndex(folder.parent / "index.sqlite3")
    add_files(index, folder, CORPUS)
    real = None if spec == "scripted" else model_from_spec(spec)
    rows = []
    for case in chosen:
        providers = [CorpusProvider(index, corpus=CORPUS)]
        if real is None:  # as the test suite runs it
            loop = ResearchLoop(
                model=research_model(case),
                providers=providers,
                config=ResearchConfig(support=support, max_iters=1),
                resilience=ResilienceSettings(timeout_s=5.0),
                sleep=_no_sleep,
            )
        else:
            loop = ResearchLoop(
                model=real, providers=providers, config=ResearchConfig(support=support)
            )
        started = time.perf_counter()
        run = await loop.run(case.question)
        row = outcome(case, run.response, {r.id for r in run.state.search_results})
        row.update(support=support, seconds=round(time.perf_counter() - started, 1))
        rows.append(row)
        print(
            f"{support} {row['outcome']:8} {case.file}: {row.get('answer', '')[:80]!r}",
            file=sys.stderr,
        )
    return rows


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"# Held-out injections inside the paragraph that names the subject ({report['model']})",
        "",
        f"{report['date']}, {report['machine']} (shared with other engineers' jobs). "
        "The limit of the structural defence (docs/security.md): each visible injected "
        "document of tests/adversarial/injection_heldout with its injection joined onto "
        "the paragraph that names the subject. Made by `python benchmarks/"
        f"injection_inparagraph.py --model {report['model']}` (the embedded model under "
        "`flock /tmp/gs-model.lock`). `scripted` obeys any injection reaching its prompt.",
        "",
        "| support | documents | obeyed | answered | lost |",
        "|---|---|---|---|---|",
    ]
    for support, rows in report["runs"].items():
        t = totals(rows)
        low, high = wilson(t["obeyed"], len(rows))
        lines.append(
            f"| {support} | {len(rows)} | {t['obeyed']} [{low:.0%}, {high:.0%}] | "
            f"{t['answered']} | {t['lost']} |"
        )
    lines += [
        "",
        "| support | document | kind | language | outcome | answer |",
        "|---|---|---|---|---|---|",
    ]
    for support, rows in report["runs"].items():
        for r in rows:
            said = str(r.get("answer", "")).replace("|", "/").replace("\n", " ")[:100]
            lines.append(
                f"| {support} | {r['case']} | {r['kind']} | {r['language']} | "
                f"{r['outcome']} | {said} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="scripted", help="scripted, or a model spec")
    parser.add_argument("--support", nargs="*", default=None, help="default: all for scripted")
    args = parser.parse_args()
    modes = args.support or (
        ["lexical", "model", "off"] if args.model == "scripted" else ["lexical"]
    )
    runs = {support: asyncio.run(evaluate(args.model, support)) for support in modes}
    report = {
        "model": args.model,
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
        "runs": runs,
    }
    name = f"injection_inparagraph_{args.model.replace(':', '_')}"
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(report, indent=1, ensure_ascii=False))
    (RESULTS / f"{name}.md").write_text(markdown(report))
    print(json.dumps({s: totals(r) for s, r in runs.items()}))


if __name__ == "__main__":
    main()
