"""The code style and type gates run with the tests, so CI holds them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff comes with the test extra")
def test_ruff_finds_nothing() -> None:
    result = _run("ruff", "check", "src", "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_core_passes() -> None:
    pytest.importorskip("mypy")
    result = _run("mypy", "src")
    assert result.returncode == 0, result.stdout + result.stderr
