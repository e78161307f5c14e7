"""Offline (no model): short answers to questions that name their subject by its title.

For every question of the first research set (`research_eval.build_questions`: "Who
composed the opera Don Giovanni?", "Lima is the capital of which country or region?",
138 questions), the corpus search for the question gives the top 5 sources, numbered
as the loop numbers them. The synthesis guard (loops/research/phases.py) then judges:

- right: the expected answer citing the question's own article, and citing each other
  retrieved source whose text holds it ("Mozart" citing Mozart's article);
- wrong: each other retrieved source's title citing that source ("Giovanni Pierluigi
  da Palestrina [3]"), when the title does not hold the expected answer.

A right answer the guard rejects is a false reject; a wrong one it passes (as written
or repaired) a false accept.

    python benchmarks/research_named_check.py   # prints a Markdown table
"""

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from research_eval import _fold, build_questions, top_sources

from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.guards.diff import apply_patch
from guardsearch.loops.research.citations import LexicalSupport, source_text
from guardsearch.loops.research.config import ResearchConfig
from guardsearch.loops.research.phases import synthesize_step
from guardsearch.tools import CorpusProvider


async def passes(step, value: dict, question: str) -> bool:
    ctx = Context(objective=question)
    art = Artifact(id="a", step=step.name, text=json.dumps(value), value=value)
    verdict = await step.checker.check(art, ctx)
    if verdict.passed or not verdict.patch:
        return verdict.passed
    fixed = apply_patch(value, verdict.patch)
    art = Artifact(id="b", step=step.name, text=json.dumps(fixed), value=fixed)
    return (await step.checker.check(art, ctx)).passed


async def main() -> dict[str, int]:
    provider = CorpusProvider(corpus="wikipedia")
    counts = dict.fromkeys(
        ("questions", "right", "false_reject", "wrong", "false_accept", "not_retrieved"), 0
    )
    for q in build_questions():
        counts["questions"] += 1
        sources = await top_sources(provider, q.question)
        own = [i for i, s in sources.items() if s.title == q.article]
        if not own:
            counts["not_retrieved"] += 1
            continue
        step = synthesize_step(ResearchConfig(), sources, LexicalSupport())
        holders = [i for i, s in sources.items() if _fold(q.expected) in _fold(source_text(s))]
        for source_id in dict.fromkeys([*own, *holders]):
            counts["right"] += 1
            value = {"answer": q.expected, "citations": [source_id]}
            counts["false_reject"] += not await passes(step, value, q.question)
        for source_id, source in sources.items():
            if source_id in own or _fold(q.expected) in _fold(source.title):
                continue
            counts["wrong"] += 1
            value = {"answer": source.title, "citations": [source_id]}
            counts["false_accept"] += await passes(step, value, q.question)
    return counts


if __name__ == "__main__":
    c = asyncio.run(main())
    print("| questions | article not in top 5 | right drafts | false rejects | wrong drafts "
          "| false accepts |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    print(
        f"| {c['questions']} | {c['not_retrieved']} | {c['right']} | {c['false_reject']} | "
        f"{c['wrong']} | {c['false_accept']} |"
    )
