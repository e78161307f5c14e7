"""Suite-wide fixtures: unit tests can never reach a real model by accident.

Every test not marked `model` runs with real backends switched off
(`allow_real_models(False)`, pydantic-ai's `ALLOW_MODEL_REQUESTS = False`); tests
marked `model` run the real embedded model and switch them on.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from guardsearch import allow_real_models


@pytest.fixture(autouse=True)
def real_models_only_when_marked(request: pytest.FixtureRequest) -> Iterator[None]:
    allow_real_models(request.node.get_closest_marker("model") is not None)
    yield
    allow_real_models(False)
