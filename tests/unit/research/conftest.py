"""Fixtures for the research tests: a clean home, a small corpus, the real corpus."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from research_helpers import DOCS

from guardsearch.corpus import CorpusIndex, Document, open_index


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path / "home"))
    for var in (
        "RESEARCH_MAX_ITERS",
        "RESEARCH_MAX_QUERIES",
        "RESEARCH_MAX_SOURCES",
        "RESEARCH_MAX_EXECUTION_TIME_S",
        "RESEARCH_TOKEN_BUDGET",
        "RESEARCH_TIER",
        "GUARDSEARCH_API_KEY",
    ):
        monkeypatch.delenv(var, raising=False)
    return tmp_path / "home"


@pytest.fixture
def small_index(tmp_path: Path) -> Iterator[CorpusIndex]:
    index = CorpusIndex(tmp_path / "small.sqlite3")
    index.add(
        "wiki-mini",
        [
            Document(
                corpus="wiki-mini",
                key=t,
                title=t,
                description=d,
                body=b,
                location="https://en.wikipedia.org/wiki/" + t.replace(" ", "_"),
                kind="wikipedia",
            )
            for t, d, b in DOCS
        ],
        license="CC BY-SA 4.0",
        attribution="Wikipedia contributors",
    )
    yield index
    index.close()


@pytest.fixture(scope="session")
def wiki_index(tmp_path_factory: pytest.TempPathFactory) -> CorpusIndex:
    """The real embedded corpus, indexed once per test session (about a second)."""
    return open_index(tmp_path_factory.mktemp("wiki") / "index.sqlite3")
