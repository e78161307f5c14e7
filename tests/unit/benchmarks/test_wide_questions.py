"""The wide research set: built the same way every time, committed as built, and its
gold is what the article says (its text over a one-line description that disagrees)."""

from __future__ import annotations

import json
from pathlib import Path

from guardbench.wide_questions import build

ROOT = Path(__file__).resolve().parents[3]


def _committed() -> dict[str, dict]:  # type: ignore[type-arg]
    rows = (ROOT / "benchmarks/data/research_wide.jsonl").read_text().splitlines()
    return {r["id"]: r for r in map(json.loads, rows)}


def test_the_committed_wide_set_is_the_generator_s_output() -> None:
    built = {q.id: q.record() for q in build()}
    committed = _committed()
    assert set(built) == set(committed)
    for key, row in built.items():
        assert {k: row[k] for k in committed[key]} == committed[key], key


def test_a_work_s_year_is_the_year_it_came_out_not_an_earlier_serial() -> None:
    row = _committed()["dates-028"]  # "partially published in serial form in 1945-1946"
    assert row["question"] == "What year did The Catcher in the Rye come out?"
    assert row["answers"] == ["1951"]


def test_a_reign_starts_where_the_text_says_when_the_description_disagrees() -> None:
    row = _committed()["dates-033"]  # description "from 1879", text "from 1889"
    assert row["answers"] == ["1889"]
    assert _committed()["dates-034"]["answers"] == ["690"]  # both agree: unchanged


def test_an_organisation_s_founding_is_its_own_not_a_precursor_s() -> None:
    # "Founded in 1877 ... its direct precursors include the Tenmongata, founded in 1684"
    assert _committed()["organisations-006"]["answers"] == ["1877"]


def test_the_blind_set_is_the_generator_s_and_shares_no_article_with_the_main_set() -> None:
    from guardbench.wide_questions import blind

    rows = (ROOT / "benchmarks/data/research_wide_blind.jsonl").read_text().splitlines()
    committed = [json.loads(r) for r in rows]
    assert committed == [q.record() for q in blind()]
    main = {a for row in _committed().values() for a in row["articles"]}
    assert all(not set(r["articles"]) & main and r["split"] == "blind" for r in committed)
    # Every type but organisations: the main set holds every organisation question the
    # corpus gives.
    assert {r["type"] for r in committed} >= {"dates", "twohop", "unanswerable", "lists"}
