"""Source: the one type for anything retrieved (corpus, web, probe, find candidates)."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError, replace

import pytest

from guardsearch.core.source import Source


def test_only_the_title_is_required_and_fields_are_keyword_only() -> None:
    source = Source(title="Monet")
    assert (source.id, source.location, source.text, source.provider) == ("", "", "", "")
    assert (source.kind, source.rank, source.score) == ("web", 0, 0.0)
    with pytest.raises(TypeError):
        Source("Monet")  # type: ignore[misc]


def test_key_is_the_id_else_the_location_else_the_title() -> None:
    assert Source(id="[1]", title="t", location="https://x").key == "[1]"
    assert Source(title="t", location="https://x").key == "https://x"
    assert Source(title="t").key == "t"


def test_as_dict_holds_every_field_and_is_json_ready() -> None:
    source = Source(title="Seurat", location="https://w/Seurat", score=-1.5, rank=2, query="q")
    data = source.as_dict()
    assert set(data) == {
        "id",
        "title",
        "location",
        "text",
        "description",
        "kind",
        "provider",
        "query",
        "rank",
        "score",
        "license",
        "attribution",
    }
    assert Source(**json.loads(json.dumps(data))) == source


def test_sources_are_values_equal_by_every_field_and_hashable() -> None:
    a = Source(title="t", location="l", text="x")
    assert a == Source(title="t", location="l", text="x")
    assert a != replace(a, text="y") and a.key == replace(a, text="y").key
    assert len({a, Source(title="t", location="l", text="x")}) == 1
    with pytest.raises(FrozenInstanceError):
        a.title = "u"  # type: ignore[misc]
