"""Citation verification: existence and support, checked in code."""

from __future__ import annotations

from research_helpers import research_model

from guardsearch.loops.research.citations import (
    LexicalSupport,
    ModelSupport,
    cited_ids,
    lexical_support,
    strip_ids,
    support_judge,
    verify_citations,
)
from guardsearch.models.metered import Metered

SOURCES = {
    "[1]": "A Sunday Afternoon on the Island of La Grande Jatte was painted from 1884 to 1886 "
    "and is Georges Seurat's most famous work.",
    "[2]": "Georges Pierre Seurat was a French post-Impressionist artist.",
}


async def test_valid_ids_pass() -> None:
    v = await verify_citations(
        "Georges Seurat painted it [1]. He was French [2].", [], SOURCES, LexicalSupport()
    )
    assert v.verified == ("[1]", "[2]")
    assert v.dropped == () and v.unsupported_claims == ()


async def test_a_hallucinated_id_fails_validation_and_is_reported() -> None:
    v = await verify_citations(
        "Georges Seurat painted it [99].", ["[99]"], SOURCES, LexicalSupport()
    )
    assert v.verified == ()
    assert v.hallucinated == ("[99]",)
    assert "[99] is not a source id" in v.feedback(["[1]", "[2]"])


async def test_a_hallucinated_id_next_to_a_valid_one_is_dropped_from_the_answer() -> None:
    answer = "Georges Seurat painted it [1][99]."
    v = await verify_citations(answer, ["[1]", "[99]"], SOURCES, LexicalSupport())
    assert v.verified == ("[1]",) and v.hallucinated == ("[99]",)
    assert strip_ids(answer, v.dropped) == "Georges Seurat painted it [1]."


async def test_claims_unsupported_by_their_source_fail_the_semantic_check() -> None:
    v = await verify_citations(
        "It was painted by Vincent van Gogh in Amsterdam [1].", [], SOURCES, LexicalSupport()
    )
    assert v.verified == () and v.unsupported == ("[1]",)
    assert v.unsupported_claims == ("It was painted by Vincent van Gogh in Amsterdam.",)


async def test_a_number_the_source_does_not_contain_makes_a_claim_unsupported() -> None:
    assert lexical_support("Seurat painted it from 1884 to 1886", SOURCES["[1]"]) == 1.0
    assert lexical_support("Seurat painted it in 1950", SOURCES["[1]"]) == 0.0


async def test_listed_ids_without_inline_markers_are_checked_against_the_whole_answer() -> None:
    v = await verify_citations("Georges Seurat.", ["[1]", "2"], SOURCES, LexicalSupport())
    assert v.verified == ("[1]", "[2]")


def test_ids_are_collected_inline_first_and_normalised() -> None:
    assert cited_ids("A [2]. B [ 1 ].", ["3", "[2]"]) == ["[2]", "[1]", "[3]"]


async def test_the_optional_model_judge_decides_support() -> None:
    model = research_model(support=['{"supported": false}'])
    judge = ModelSupport(Metered(model))
    v = await verify_citations("Georges Seurat painted it [1].", [], SOURCES, judge)
    assert v.method == "model" and v.unsupported == ("[1]",)
    prompt = model.requests[0].messages[1].content
    assert "Claim: Georges Seurat painted it." in prompt and "1884" in prompt


async def test_an_unparseable_judge_verdict_counts_as_no_support() -> None:
    judge = ModelSupport(Metered(research_model(support=["not json"])))
    assert await judge.supports("Seurat painted it", SOURCES["[1]"]) is False


MENINAS = {
    "[1]": "Las Meninas is a 1656 oil painting in the Museo del Prado in Madrid, by Diego "
    "Velázquez.",
    "[2]": "La bohème is an opera in four acts composed by Giacomo Puccini.",
}


async def test_an_answer_fragment_must_itself_be_in_its_source() -> None:
    question = "Who painted Las Meninas?"
    wrong = await verify_citations(
        "Gustave Eiffel", ["[1]"], MENINAS, LexicalSupport(), question=question
    )
    right = await verify_citations(
        "Diego Velázquez", ["[1]"], MENINAS, LexicalSupport(), question=question
    )
    assert wrong.verified == () and right.verified == ("[1]",)


async def test_a_fragment_from_an_article_about_something_else_is_unsupported() -> None:
    v = await verify_citations(
        "Giacomo Puccini",
        ["[2]"],
        MENINAS,
        LexicalSupport(),
        question="Who composed the opera Don Giovanni?",
    )
    assert v.unsupported == ("[2]",)


DON_GIOVANNI = {
    "[1]": "Don Giovanni is an opera in two acts with music by Wolfgang Amadeus Mozart and "
    "Italian libretto by Lorenzo Da Ponte.",
}


async def test_a_fragment_is_judged_by_the_words_it_adds_to_the_question() -> None:
    # "Giovanni" is the question's word and "da" is Da Ponte's: neither says Palestrina
    # composed it (the first eval's Don Giovanni question, answered so on the model).
    question = "Who composed the opera Don Giovanni?"
    wrong = await verify_citations(
        "Giovanni Pierluigi da Palestrina", ["[1]"], DON_GIOVANNI, LexicalSupport(), question
    )
    right = await verify_citations(
        "Wolfgang Amadeus Mozart", ["[1]"], DON_GIOVANNI, LexicalSupport(), question
    )
    assert wrong.verified == () and right.verified == ("[1]",)


# -- unsupported and uncited claims --------------------------------------------------


async def test_an_unsupported_cited_sentence_is_removed_from_the_answer() -> None:
    answer = (
        "Georges Seurat painted it from 1884 to 1886 [1]. He was born in Amsterdam in 1950 [1]."
    )
    v = await verify_citations(answer, [], SOURCES, LexicalSupport())
    assert v.verified == ("[1]",)
    assert v.unsupported_claims == ("He was born in Amsterdam in 1950.",)
    assert v.removed_claims == ("He was born in Amsterdam in 1950.",)
    assert v.clean_answer == "Georges Seurat painted it from 1884 to 1886 [1]."


async def test_an_uncited_factual_sentence_is_checked_against_the_retrieved_sources() -> None:
    answer = (
        "Georges Seurat painted it [1]. Seurat was a French post-Impressionist artist. "
        "He later moved to Tokyo and painted 300 murals there."
    )
    v = await verify_citations(answer, ["[1]"], SOURCES, LexicalSupport())
    # the second sentence is uncited but [2] says it: kept; the third nothing says: flagged
    assert v.verified == ("[1]",)
    assert v.unsupported_claims == ("He later moved to Tokyo and painted 300 murals there.",)
    assert v.removed_claims == v.unsupported_claims
    assert v.clean_answer == (
        "Georges Seurat painted it [1]. Seurat was a French post-Impressionist artist."
    )


async def test_an_uncited_sentence_about_the_sources_is_not_a_claim() -> None:
    answer = "Georges Seurat painted it [1]. The sources do not say where it hangs today."
    v = await verify_citations(answer, [], SOURCES, LexicalSupport())
    assert v.unsupported_claims == () and v.clean_answer == answer


async def test_a_removed_sentence_keeps_the_rest_of_the_answer_layout() -> None:
    answer = "Georges Seurat painted it [1].\n\nIt was painted by Vincent van Gogh in 1950 [2]."
    v = await verify_citations(answer, [], SOURCES, LexicalSupport())
    assert v.verified == ("[1]",) and v.unsupported == ("[2]",)
    assert v.clean_answer == "Georges Seurat painted it [1]."


async def test_the_model_judge_is_not_gated_by_the_lexical_check() -> None:
    # An answer fragment no word of which is in the source: lexical fails it; the
    # model judge alone decides with --support model.
    model = research_model(support=['{"supported": true}'])
    v = await verify_citations(
        "Diego Rodríguez de Silva",
        ["[1]"],
        MENINAS,
        ModelSupport(Metered(model)),
        question="Who painted Las Meninas?",
    )
    assert v.verified == ("[1]",)
    lexical = await verify_citations(
        "Diego Rodríguez de Silva",
        ["[1]"],
        MENINAS,
        LexicalSupport(),
        question="Who painted Las Meninas?",
    )
    assert lexical.verified == ()


async def test_support_off_checks_existence_only() -> None:
    judge = support_judge("off")
    v = await verify_citations(
        "It was painted by Vincent van Gogh [1]. He lived on Mars [7].", [], SOURCES, judge
    )
    assert v.method == "off" and v.verified == ("[1]",) and v.hallucinated == ("[7]",)
    assert v.unsupported_claims == () and v.removed_claims == ()
    assert v.clean_answer == "It was painted by Vincent van Gogh [1]. He lived on Mars."


async def test_the_model_judge_asks_once_per_claim_and_source() -> None:
    model = research_model(support=['{"supported": true}'])
    judge = ModelSupport(Metered(model))
    for _ in range(2):
        await verify_citations("Georges Seurat painted it [1].", [], SOURCES, judge)
    assert len(model.requests) == 1
