"""A period condition ("operas of the 19th century", "painters of the 17th century") is
checked by code on the item's own dates; the judge is never asked to place a year in a
century (the embedded judge said no to right items and the runs stopped `no_refinement`
with 0-1 items). The replan must search for the items wanted, not the prompt's example."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from find_helpers import wiki_index

from guardsearch.apps.find import find
from guardsearch.apps.find.period import without_period
from guardsearch.apps.find.steps import replan_step
from guardsearch.core.messages import ModelRequest
from guardsearch.corpus import CorpusIndex
from guardsearch.models.scripted import ScriptedModel
from guardsearch.tools.corpus_search import CorpusProvider


@pytest.mark.parametrize(
    ("qualifier", "left"),
    [
        ("of the 19th century", ""),
        ("of the 1960s", ""),
        ("from 1889", ""),
        ("Italian of the 19th century", "Italian"),
        ("in Africa", "in Africa"),
        ("by Russian writers", "by Russian writers"),
        ("", ""),
    ],
)
def test_the_judge_s_condition_is_the_qualifier_without_its_period(
    qualifier: str, left: str
) -> None:
    assert without_period(qualifier) == left


OPERAS = [
    (
        "La traviata",
        "1853 opera by Giuseppe Verdi",
        "La traviata is an Italian opera in three acts.",
    ),
    ("Carmen", "1875 opera by Georges Bizet", "Carmen is an opera in four acts."),
    ("Tristan und Isolde", "1865 opera by Richard Wagner", "Tristan is a music drama."),
    ("La bohème", "1896 opera by Giacomo Puccini", "La bohème is an opera in four acts."),
    ("Don Giovanni", "1787 opera by Wolfgang Amadeus Mozart", "Don Giovanni is an opera."),
    ("Tosca", "Opera by Giacomo Puccini", "Tosca is an opera first performed in 1900."),
    ("Giuseppe Verdi", "Italian opera composer (1813–1901)", "Verdi wrote operas."),
    ("Opera", "Art form combining sung text and music", "Opera is an art form."),
]


@pytest.fixture
def operas_index(tmp_path: Path) -> Iterator[CorpusIndex]:
    index = wiki_index(tmp_path / "operas.sqlite3", "operas", OPERAS)
    yield index
    index.close()


def _plan(qualifier: str) -> str:
    return json.dumps(
        {
            "reflection": {
                "plan": "search operas, keep those of the century",
                "assumptions": [],
                "risks": [],
                "success_criteria": "3 operas",
            },
            "item_type": "opera",
            "qualifier": qualifier,
            "keywords": ["operas", "19th", "century"],
            "domain": "art",
        }
    )


def _judge_requests(model: ScriptedModel) -> list[str]:
    return [
        r.messages[-1].content
        for r in model.requests
        if "answer" in json.dumps(r.json_schema or {})
        and "reflection" not in json.dumps(r.json_schema or {})
    ]


async def test_a_century_is_checked_on_the_item_s_dates_not_by_the_judge(
    operas_index: CorpusIndex,
) -> None:
    """A judge that says no whenever it is asked about a century (as the embedded one
    did to "1853 opera by Giuseppe Verdi") no longer loses the right operas; the 18th-
    century one and the composer stay out, by the dates and the type rule."""

    def answer(request: ModelRequest) -> str:
        if "reflection" in json.dumps(request.json_schema or {}):
            return _plan("of the 19th century")
        if "century" in request.messages[-1].content:
            return json.dumps({"answer": "no", "reason": "no century is stated"})
        return json.dumps({"answer": "yes", "reason": "an opera"})

    model = ScriptedModel(answer)
    run = await find(
        "operas of the 19th century", model=model, provider=CorpusProvider(operas_index)
    )
    titles = {i.title for i in run.items}
    # Tosca's date is in its first sentence (1900: the 19th century runs 1801-1900)
    assert titles == {"La traviata", "Carmen", "Tristan und Isolde", "La bohème", "Tosca"}
    assert run.stop_reason == "threshold_met"
    assert _judge_requests(model) == []  # a type and a period: nothing left to judge


async def test_the_rest_of_a_mixed_condition_still_goes_to_the_judge(
    operas_index: CorpusIndex,
) -> None:
    """For "Italian operas of the 19th century" the period is code's, "Italian" is still
    checked (the article must say it) and asked of the judge."""

    def answer(request: ModelRequest) -> str:
        if "reflection" in json.dumps(request.json_schema or {}):
            return _plan("Italian of the 19th century")
        return json.dumps({"answer": "yes", "reason": "an Italian opera"})

    model = ScriptedModel(answer)
    provider = CorpusProvider(operas_index)
    run = await find(
        "Italian operas of the 19th century", model=model, provider=provider, min_items=1
    )
    assert {i.title for i in run.items} == {"La traviata"}  # the only one said Italian
    asked = _judge_requests(model)
    assert asked and all("Italian" in a and "century" not in a for a in asked)


def test_the_replan_must_name_the_items_wanted() -> None:
    guard = replan_step(["operas 19th century"], "opera").guard
    assert callable(guard)
    said = guard({"keywords": ["painting", "Monet"], "reason": "search the works"})
    assert isinstance(said, str) and "'opera'" in said
    assert guard({"keywords": ["opera", "Verdi"], "reason": "a maker's operas"}) is None
    assert guard({"keywords": ["operas", "19th", "century"], "reason": "again"}) is not None
