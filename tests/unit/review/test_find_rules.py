"""The find verifier's objective rules and the rejection-reason -> refinement mapping."""

from __future__ import annotations

import pytest

from guardsearch.apps.find.refine import apply, keyword_refinement, source_refinement, suggest
from guardsearch.apps.find.rules import creator_of, head_noun, type_rejection
from guardsearch.apps.find.spec import FindSpec, forms
from guardsearch.core.errors import ConfigError
from guardsearch.core.source import Source
from guardsearch.loops.review import Verdict
from guardsearch.loops.review.quality import quality_report


@pytest.mark.parametrize(
    ("description", "reason"),
    [
        ("1889 painting by Vincent van Gogh", None),
        ("Series of paintings by Claude Monet", None),
        ("Painting attributed to Zhang Zeduan", None),
        ("French painter (1840–1926)", "person"),
        ("Dutch and Flemish painter (c. 1525/30–1569)", "person"),
        ("Art museum in Paris, France", "wrong_type"),
        ("Type of painting method", "category_not_instance"),
        ("Painting technique", "category_not_instance"),
        ("Paintings, often prehistoric, on cave walls and ceilings", "category_not_instance"),
        ("", "no_description"),
    ],
)
def test_type_rules_on_descriptions(description: str, reason: str | None) -> None:
    assert type_rejection(description, "painting") == reason


def test_head_noun_forms_and_creator() -> None:
    assert head_noun("Art museum in Paris, France") == "museum"
    assert head_noun("French painter (1840–1926)") == "painter"
    assert forms("paintings") == ("painting", "paintings")
    assert forms("city") == ("city", "cities")
    assert creator_of("1889 painting by Vincent van Gogh") == "Vincent van Gogh"


SPEC = FindSpec(item_type="painting", qualifier="by impressionist painters", keywords=("painting",))
REQUEST = "paintings by impressionist painters"


def cand(key: str, description: str) -> Source:
    return Source(id=key, title=key, description=description)


def test_person_rejections_map_to_negative_head_nouns_and_the_item_type() -> None:
    rejected = [
        cand("a", "French painter (1840–1926)"),
        cand("b", "Dutch painter (1853–1890)"),
        cand("c", "French sculptor (1840–1917)"),
    ]
    refinement = keyword_refinement("person", rejected, SPEC.evolve(keywords=("art",)), REQUEST)
    assert refinement is not None and refinement.level == "keywords"
    assert refinement.add_negative_keywords == ["painter", "sculptor"]
    assert refinement.add_positive_keywords == ["painting"]
    assert refinement.target == "person"


def test_negative_keywords_never_include_request_words() -> None:
    rejected = [cand("a", "Impressionist painting movement")]
    refinement = keyword_refinement("wrong_type", rejected, SPEC, REQUEST)
    assert refinement is None or "impressionist" not in refinement.add_negative_keywords


def test_qualifier_rejections_map_to_positive_qualifier_words() -> None:
    refinement = keyword_refinement(
        "qualifier_unsupported", [cand("m", "Painting by X")], SPEC, REQUEST
    )
    assert refinement is not None
    assert refinement.add_positive_keywords == ["impressionist", "painters"]
    assert refinement.add_negative_keywords == []


def test_suggest_orders_by_dominant_reason_and_sources_exclude_rejected_creators() -> None:
    candidates = [
        cand("p1", "French painter (1840–1926)"),
        cand("p2", "Dutch painter (1853–1890)"),
        cand("m", "Painting by Leonardo da Vinci"),
    ]
    verdicts = [
        Verdict(key="p1", accepted=False, reason="person"),
        Verdict(key="p2", accepted=False, reason="person"),
        Verdict(key="m", accepted=False, reason="qualifier_unsupported"),
    ]
    report = quality_report(verdicts, 0.4)
    offered = suggest("keywords", report, verdicts, candidates, SPEC, REQUEST)
    assert [r.target for r in offered] == ["person", "qualifier_unsupported"]
    sources = source_refinement(report, {"qualifier_unsupported": [candidates[2]]}, SPEC)
    assert sources is not None
    assert sources.source_filters == {
        "require_description": ["painting"],
        "via_creators": ["by impressionist painters"],
        "exclude_creators": ["Leonardo da Vinci"],
    }
    spec = apply(SPEC, sources)
    assert spec.require_description == ("painting",) and spec.via_creators
    assert spec.exclude_creators == ("Leonardo da Vinci",) and spec.k > SPEC.k
    assert suggest("replan", report, verdicts, candidates, SPEC, REQUEST)[0].level == "replan"


def test_spec_needs_a_type_and_keywords() -> None:
    with pytest.raises(ConfigError):
        FindSpec(item_type=" ", keywords=("x",))
    with pytest.raises(ConfigError):
        FindSpec(item_type="painting", keywords=())
