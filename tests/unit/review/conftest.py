"""Fixtures for the find tests: a clean home and a small corpus of typed descriptions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from guardsearch.corpus import CorpusIndex, Document

DOCS = [
    (
        "Claude Monet",
        "French painter (1840–1926)",
        "Monet was a French painter and founder of Impressionism.",
    ),
    (
        "Edgar Degas",
        "French Impressionist artist (1834–1917)",
        "Degas was a French Impressionist artist.",
    ),
    (
        "Leonardo da Vinci",
        "Italian polymath (1452–1519)",
        "Leonardo was an Italian polymath and painter.",
    ),
    (
        "Water Lilies (Monet series)",
        "Series of paintings by Claude Monet",
        "Water Lilies is a series of paintings.",
    ),
    (
        "Mona Lisa",
        "Painting by Leonardo da Vinci",
        "The Mona Lisa is a half-length portrait painting.",
    ),
    (
        "The Starry Night",
        "1889 painting by Vincent van Gogh",
        "The Starry Night is an oil-on-canvas painting by the post-impressionist painter.",
    ),
    (
        "Impressionism",
        "19th-century art movement",
        "Impressionism was an art movement of painters.",
    ),
    ("Watercolor painting", "Type of painting method", "Watercolor is a painting method."),
    (
        "Vincent van Gogh",
        "Dutch painter (1853–1890)",
        "Van Gogh was a Dutch Post-Impressionist painter.",
    ),
    ("Musée d'Orsay", "Art museum in Paris, France", "The museum holds impressionist paintings."),
    (
        "Impression, Sunrise",
        "1872 painting by Claude Monet",
        "Impression, Sunrise is a painting that gave Impressionism its name.",
    ),
    (
        "A Sunday Afternoon on the Island of La Grande Jatte",
        "Painting by Georges Seurat",
        "A Sunday Afternoon is a painting by the post-Impressionist Georges Seurat.",
    ),
    (
        "Georges Seurat",
        "French painter (1859–1891)",
        "Seurat was a French post-Impressionist artist and painter.",
    ),
]


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def art_index(tmp_path: Path) -> Iterator[CorpusIndex]:
    index = CorpusIndex(tmp_path / "art.sqlite3")
    index.add(
        "art",
        [
            Document(
                corpus="art",
                key=t,
                title=t,
                description=d,
                body=b,
                location="https://en.wikipedia.org/wiki/" + t.replace(" ", "_"),
                kind="wikipedia",
            )
            for t, d, b in DOCS
        ],
    )
    yield index
    index.close()
