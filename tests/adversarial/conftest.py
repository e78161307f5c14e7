"""The adversarial suite runs in a home of its own (no user corpus, no settings)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path / "home"))
    for var in ("RESEARCH_MAX_ITERS", "RESEARCH_TIER", "RESEARCH_TOKEN_BUDGET"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path / "home"
