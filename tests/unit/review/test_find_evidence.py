"""Qualifier evidence: a prefixed form ("post-Impressionist") is not the bare term."""

from __future__ import annotations

import pytest

from guardsearch.apps.find.act import mentions, missing_evidence
from guardsearch.apps.find.spec import FindSpec
from guardsearch.corpus import CorpusIndex
from guardsearch.loops.review import ReviewConfig

SPEC = FindSpec(
    item_type="painting", qualifier="by impressionist painters", keywords=("impressionist",)
)


@pytest.mark.parametrize(
    "text",
    [
        "French Impressionist painter",
        "a leading impressionist painter",
        "founder of Impressionism, the painter",
        "IMPRESSIONIST PAINTER",
        "A post-Impressionist painter who began as an Impressionist painter",
    ],
)
def test_the_bare_term_is_evidence(text: str) -> None:
    assert missing_evidence(SPEC, text) == []


@pytest.mark.parametrize(
    "text",
    [
        "French post-Impressionist painter",
        "Dutch Post-Impressionist painter",
        "a neo-impressionist painter",
        "proto-Impressionist painter",
        "non-impressionist painter",
        "anti-Impressionist painter",
        "Post–Impressionism painter",  # an en dash
        "postimpressionist painter",
    ],
)
def test_a_prefixed_form_is_not_the_bare_term(text: str) -> None:
    assert missing_evidence(SPEC, text) == ["impressionist"]


def test_mentions_needs_a_word_start() -> None:
    assert mentions("Monet, an Impressionist", "impressionist")
    assert not mentions("an expressionist", "impressionist")
    assert not mentions("anti-impressionist", "impressionist")


async def test_post_impressionist_works_are_not_impressionist_paintings(
    art_index: CorpusIndex,
) -> None:
    from find_helpers import answer

    from guardsearch.apps.find import find
    from guardsearch.models.scripted import ScriptedModel
    from guardsearch.tools.corpus_search import CorpusProvider

    run = await find(
        "paintings by impressionist painters",
        model=ScriptedModel(answer),
        provider=CorpusProvider(art_index),
        min_items=2,
        config=ReviewConfig(min_items=2),
    )
    titles = {i.title for i in run.items}
    assert "The Starry Night" not in titles  # Van Gogh: "Dutch Post-Impressionist painter"
    assert "A Sunday Afternoon on the Island of La Grande Jatte" not in titles  # Seurat
    assert titles >= {"Water Lilies (Monet series)", "Impression, Sunrise"}
    reasons = {a.report.rejection_breakdown.get("qualifier_unsupported", 0) for a in run.attempts}
    assert max(reasons) >= 1
