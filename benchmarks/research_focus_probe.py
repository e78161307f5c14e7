"""What a narrower synthesis request should carry (issue 16): measured on the model.

    flock /tmp/gs-model.lock python3 benchmarks/research_focus_probe.py

The three first-set questions the embedded 0.5B got wrong among all five retrieved
sources ("Who composed the opera Don Giovanni?" -> "Giovanni Pierluigi da Palestrina",
"Who wrote the novel The Golden Ass?" -> "James Bond", "Who directed the film The
Jazz Singer?" -> "Billie Holiday"), each asked once more with the source the question
names alone, three ways: a fresh request; with the verdict on the wrong answer (the
retry channel's feedback); with the verdict and the rejected draft (feedback and the
"already tried" list, as a retry shows them). One attempt each at temperature 0, the
synthesis guard judging against all five sources. Writes
benchmarks/results/research_focus_probe.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from research_eval import top_sources

from guardsearch.core.budget import Budget
from guardsearch.core.context import Context
from guardsearch.core.errors import StepFailed
from guardsearch.core.events import Trace
from guardsearch.loops.research.citations import LexicalSupport
from guardsearch.loops.research.config import ResearchConfig
from guardsearch.loops.research.phases import render_sources, synthesize_step
from guardsearch.loops.research.subject import named_source
from guardsearch.models.metered import Metered
from guardsearch.models.spec import model_from_spec
from guardsearch.steps.step import run_step
from guardsearch.tools import CorpusProvider

OUT = Path(__file__).parent / "results" / "research_focus_probe.md"
# (question, the wrong answer the model gave over all sources, and the id it cited)
CASES = (
    ("Who composed the opera Don Giovanni?", "Giovanni Pierluigi da Palestrina", "[3]"),
    ("Who wrote the novel The Golden Ass?", "James Bond", "[2]"),
    ("Who directed the film The Jazz Singer?", "Billie Holiday", "[1]"),
)
WAYS = ("fresh", "verdict", "verdict and draft")


async def probe(model_spec: str) -> list[tuple[str, str, bool, str]]:
    model = model_from_spec(model_spec)
    provider = CorpusProvider(corpus="wikipedia")
    rows = []
    for question, wrong, cited in CASES:
        full = await top_sources(provider, question)
        named = named_source(question, full)
        if named is None:
            raise SystemExit(f"no retrieved source is named by {question!r}")
        step = replace(synthesize_step(ResearchConfig(), full, LexicalSupport()), rmax=1)
        variables = {
            "task": question,
            "sources": render_sources([full[named[0]]], ResearchConfig().snippet_chars),
            "degraded": False,
            "insufficient": False,
        }
        verdict = (
            f'the sources you cite do not say: "{wrong}". Use only facts stated in the sources.'
        )
        draft = json.dumps({"answer": wrong, "citations": [cited]})
        base = Context(objective=question)
        contexts = {
            "fresh": base,
            "verdict": base.amend(feedback=verdict),
            "verdict and draft": base.amend(feedback=verdict, tried=(draft, "")),
        }
        for way in WAYS:
            metered = Metered(model, Budget.of(calls=1), Trace())
            try:
                out = await run_step(step, contexts[way], metered, variables=variables)
                rows.append((question, way, True, str(out.value["answer"])))
            except StepFailed as failed:
                text = failed.last_artifact.text if failed.last_artifact else ""
                rows.append((question, way, False, text))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="embedded")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = asyncio.run(probe(args.model))
    lines = [
        "# A narrower synthesis request: what it should carry",
        "",
        f"`python3 benchmarks/research_focus_probe.py --model {args.model}` (see its "
        f"docstring; {time.strftime('%Y-%m-%d')}, {time.perf_counter() - started:.0f} s).",
        "",
        "| way | passed |",
        "|---|---|",
    ]
    for way in WAYS:
        passed = sum(ok for _, w, ok, _ in rows if w == way)
        lines.append(f"| {way} | {passed} of {len(CASES)} |")
    lines += ["", "| question | way | passed | answer |", "|---|---|---|---|"]
    for question, way, ok, answer in rows:
        lines.append(f"| {question} | {way} | {'yes' if ok else 'no'} | {answer[:80]} |")
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
