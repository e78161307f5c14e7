"""Suite-wide fixtures: unit tests can never reach a real model by accident.

Every test not marked `model` runs with real backends switched off
(`allow_real_models(False)`, pydantic-ai's `ALLOW_MODEL_REQUESTS = False`); tests
marked `model` run the real embedded model and switch them on.

Tests marked `slow` mostly wait (a lock held for a minute): the default run,
`python3 -m pytest` (CI), includes them; a quick loop with any `-m` selection that
does not name `slow` (`-m "not model"`) leaves them out.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from guardsearch import allow_real_models


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    selection = config.getoption("markexpr") or ""
    if not selection or "slow" in selection:
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]


@pytest.fixture(autouse=True)
def real_models_only_when_marked(request: pytest.FixtureRequest) -> Iterator[None]:
    allow_real_models(request.node.get_closest_marker("model") is not None)
    yield
    allow_real_models(False)


@pytest.fixture(autouse=True, scope="session")
def sandbox_tools() -> None:
    """The program strategy's sandbox runs under bubblewrap: install it (and libseccomp)
    with the project's own script where this machine lacks it (docs/security.md)."""
    if shutil.which("bwrap") is None:
        script = Path(__file__).resolve().parents[1] / "scripts" / "sandbox.sh"
        subprocess.run(["bash", str(script)], check=False)
