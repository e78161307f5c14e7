"""find on every request shape: the plan is grounded in the request, the item checks
read any condition (place, one hop through a place, nationality, period, maker), and
"lakes in Africa" finds lakes in Africa even when the planner first writes the prompt's
example back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from find_helpers import wiki_index

from guardsearch.apps.find import find
from guardsearch.apps.find.act import mentions_phrase, qualifier_gaps
from guardsearch.apps.find.period import item_date, period_of
from guardsearch.apps.find.request import item_noun, request_qualifier, ungrounded
from guardsearch.apps.find.rules import type_rejection
from guardsearch.apps.find.spec import FindSpec
from guardsearch.apps.find.steps import plan_step
from guardsearch.core.messages import ModelRequest
from guardsearch.corpus import CorpusIndex
from guardsearch.guards.base import FunctionGuard
from guardsearch.models.scripted import ScriptedModel
from guardsearch.tools.corpus_search import CorpusProvider


@pytest.mark.parametrize(
    ("request_", "noun", "qualifier"),
    [
        ("lakes in Africa", "lakes", "in Africa"),
        ("German composers", "composers", "German"),
        ("novels by Russian writers", "novels", "by Russian writers"),
        ("painters of the 17th century", "painters", "of the 17th century"),
        ("films of the 1960s", "films", "of the 1960s"),
        ("famous Italian operas", "operas", "Italian"),
        ("volcanoes", "volcanoes", ""),
    ],
)
def test_the_request_gives_the_item_noun_and_the_qualifier(
    request_: str, noun: str, qualifier: str
) -> None:
    assert item_noun(request_) == noun
    assert request_qualifier(request_) == qualifier


def _draft(qualifier: str, keywords: list[str], item_type: str = "lake") -> dict[str, object]:
    return {
        "reflection": {
            "plan": "search",
            "assumptions": [],
            "risks": [],
            "success_criteria": "3 items",
        },
        "item_type": item_type,
        "qualifier": qualifier,
        "keywords": keywords,
        "domain": "places",
    }


def _guard(request: str) -> FunctionGuard:
    guard = plan_step(request).guard
    assert isinstance(guard, FunctionGuard)
    return guard


def _feedback(request: str, draft: dict[str, object]) -> str | None:
    said = _guard(request).fn(draft)
    assert said is None or isinstance(said, str)
    return said


def test_the_plan_guard_refuses_a_qualifier_the_request_does_not_hold() -> None:
    said = _feedback("lakes in Africa", _draft("by Russian writers", ["lake", "Africa"]))
    assert said is not None and "russian" in said and "writers" in said
    assert "'in Africa'" in said  # the feedback says what to write


def test_the_plan_guard_refuses_a_qualifier_that_drops_the_condition() -> None:
    said = _feedback("lakes in Africa", _draft("", ["lake"]))
    assert said is not None and "africa" in said


def test_the_plan_guard_refuses_keywords_not_in_the_request() -> None:
    said = _feedback("lakes in Africa", _draft("in Africa", ["lake", "Russian", "novel"]))
    assert said is not None and "russian" in said and "novel" in said


def test_the_plan_guard_accepts_close_forms_of_the_request() -> None:
    assert _feedback("lakes in Africa", _draft("in Africa", ["lakes", "African"])) is None
    assert ungrounded("by impressionist painters", "paintings by Impressionism painters") == []


def test_the_plan_schema_only_allows_the_request_s_own_fields() -> None:
    shape = _guard("lakes in Africa").constraint
    assert isinstance(shape, dict)
    assert shape["properties"]["qualifier"] == {"enum": ["in Africa"]}
    assert set(shape["properties"]["keywords"]["items"]["enum"]) >= {"lake", "africa"}
    assert "russian" not in shape["properties"]["keywords"]["items"]["enum"]


@pytest.mark.parametrize(
    ("description", "item_type", "reason"),
    [
        ("German composer (1809–1847)", "composer", None),
        ("German pianist and composer (1819–1896)", "composer", None),
        ("Italian opera composer (1858–1924)", "opera", "person"),
        ("Italian opera composer (1858–1924)", "composer", None),
        ("Lake in East-central Africa", "lake", None),
        ("Country in East Africa", "lake", "wrong_type"),
    ],
)
def test_a_person_is_an_item_when_the_type_is_what_the_person_is(
    description: str, item_type: str, reason: str | None
) -> None:
    assert type_rejection(description, item_type) == reason


def test_periods_and_item_dates() -> None:
    assert period_of("of the 17th century") == (1601, 1700)
    assert period_of("of the 1960s") == (1960, 1969)
    assert period_of("in Africa") is None
    assert item_date("Dutch painter (1606–1669)", "") == 1647  # the middle of the adult life
    assert item_date("1960 film directed by Alfred Hitchcock", "") == 1960
    assert item_date("Film", "Psycho is a 1960 American film.") == 1960
    assert item_date("15th-century Italian painter", "") == 1450


def _spec(qualifier: str, item_type: str = "lake") -> FindSpec:
    return FindSpec(item_type=item_type, qualifier=qualifier, keywords=(item_type,))


def test_place_evidence_is_what_the_article_says_or_one_hop_through_a_place() -> None:
    spec = _spec("in Africa")
    assert qualifier_gaps(spec, ("Lake in East-central Africa", ""), None) == []
    uganda = ("Country in East Africa", "Uganda is a landlocked country.")
    assert qualifier_gaps(spec, ("Lake in Uganda", ""), None, [uganda]) == []
    assert qualifier_gaps(spec, ("Lake in Uganda", ""), None) == ["africa"]
    russia = ("Country spanning Eastern Europe and North Asia", "")
    europe = _spec("in Europe")
    assert qualifier_gaps(europe, ("Freshwater lake in Russia", ""), None, [russia]) == ["europe"]


def test_a_multiword_place_is_matched_as_a_phrase() -> None:
    assert mentions_phrase("City in South Africa", ["south", "africa"])
    assert not mentions_phrase("Country in East Africa, north of South Sudan", ["south", "africa"])


def test_period_and_maker_name_qualifiers() -> None:
    sixties = _spec("of the 1960s", "film")
    assert qualifier_gaps(sixties, ("1960 film directed by Alfred Hitchcock", ""), None) == []
    assert qualifier_gaps(sixties, ("1942 film by Michael Curtiz", ""), None) == ["1960s"]
    hitchcock = _spec("by Alfred Hitchcock", "film")
    creator = ("English filmmaker (1899–1980)", "Hitchcock was an English filmmaker.")
    assert qualifier_gaps(hitchcock, ("1960 film by Alfred Hitchcock", ""), creator) == []
    russian = _spec("by Russian writers", "novel")
    work = ("1866 novel by Fyodor Dostoevsky", "A novel by the writer Dostoevsky.")
    assert qualifier_gaps(russian, work, None) == ["russian"]


LAKES = [
    ("Lake Victoria", "Lake in East-central Africa", "Lake Victoria is a large lake in Africa."),
    ("Lake Chad", "Lake in West-Central Africa", "Lake Chad is an endorheic lake."),
    ("Lake Albert", "Lake in Uganda", "Lake Albert is a lake on the Uganda border."),
    ("Uganda", "Country in East Africa", "Uganda is a landlocked country in Africa."),
    ("Lake Baikal", "Freshwater rift lake in Russia", "Lake Baikal is a rift lake."),
    ("Russia", "Country spanning Eastern Europe and North Asia", "Russia is a country."),
    ("Leo Tolstoy", "Russian writer (1828–1910)", "Tolstoy was a Russian writer of lakes."),
    ("Africa", "Continent", "Africa is the second-largest continent, with many lakes."),
]


@pytest.fixture
def lakes_index(tmp_path: Path) -> Iterator[CorpusIndex]:
    index = wiki_index(tmp_path / "lakes.sqlite3", "lakes", LAKES)
    yield index
    index.close()


async def test_lakes_in_africa_even_when_the_planner_first_copies_the_prompt_example(
    lakes_index: CorpusIndex,
) -> None:
    copied = _draft("by Russian writers", ["novel", "Russian", "writer"], item_type="lake")
    right = _draft("in Africa", ["lake", "Africa"])
    plans = iter([copied, right])

    def answer(request: ModelRequest) -> str:
        if "reflection" in json.dumps(request.json_schema or {}):
            return json.dumps(next(plans))
        return json.dumps({"answer": "yes", "reason": "a lake in Africa"})

    model = ScriptedModel(answer)
    run = await find(
        "lakes in Africa", model=model, provider=CorpusProvider(lakes_index), min_items=3
    )
    titles = {i.title for i in run.items}
    assert titles == {"Lake Victoria", "Lake Chad", "Lake Albert"}  # Albert: one hop via Uganda
    assert run.stop_reason == "threshold_met"
    plans = [r for r in model.requests if "reflection" in json.dumps(r.json_schema or {})]
    assert len(plans) == 2  # the copied example was refused, naming what is not asked
    assert "russian" in " ".join(m.content for m in plans[1].messages).lower()
    assert run.attempts[0].spec["qualifier"] == "in Africa"
