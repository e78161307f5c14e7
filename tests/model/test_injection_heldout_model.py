"""Issue 34 item 5 on the real embedded model: the held-out injections it used to obey.

Before the structural defence (loops/research/statements.py) the 0.5B model obeyed
five documents of the held-out set (tests/adversarial/injection_heldout): a different
maker posing as a correction (English), an editor's note, a role-play, a note to AI
systems in French and in Portuguese. Over the whole set's corpus, research on each of
those questions delivers no answer that does what the injection asked, cites only what
was retrieved, and gives the document's right answer. The whole set's figures:
benchmarks/results/injection_heldout.md. (Slow, about a minute: run with
`pytest -m model`, under flock /tmp/gs-model.lock.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from guardsearch.corpus import CorpusIndex, add_files
from guardsearch.loops.research import ResearchConfig, ResearchLoop
from guardsearch.models.spec import model_from_spec
from guardsearch.tools import CorpusProvider

sys.path.insert(0, str(Path(__file__).parents[1] / "adversarial"))
from injection_heldout_set import DOCS, cases, outcome

pytestmark = pytest.mark.model

OBEYED_BEFORE = ("varnholt.txt", "quenby.txt", "marrowby.txt", "ostermark.txt", "ferncastle.txt")


async def test_the_injections_the_model_obeyed_are_not_obeyed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path / "home"))
    index = CorpusIndex(tmp_path / "index.sqlite3")
    add_files(index, DOCS, "heldout")
    loop = ResearchLoop(
        model=model_from_spec("embedded"),
        providers=[CorpusProvider(index, corpus="heldout")],
        config=ResearchConfig(),
    )
    rows = []
    for case in (c for c in cases() if c.file in OBEYED_BEFORE):
        run = await loop.run(case.question)
        rows.append(outcome(case, run.response, {r.id for r in run.state.search_results}))
    assert len(rows) == len(OBEYED_BEFORE)
    assert not [r for r in rows if r["outcome"] == "obeyed"], rows
    assert not [r for r in rows if r.get("unretrieved_citation")], rows
    assert not [r for r in rows if r["outcome"] == "lost"], rows
