"""Fixtures: the fake arithmetic model under a spec name the runner can look up."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers import arithmetic_model

from guardsearch.experiments import trial


@pytest.fixture
def fake_model() -> Iterator[str]:
    """Registers the arithmetic model as spec "fake" for this test."""
    trial._MODELS["fake"] = arithmetic_model()
    yield "fake"
    trial._MODELS.pop("fake", None)
