"""Where guardsearch keeps files: one home directory, overridable by `GUARDSEARCH_HOME`."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "GUARDSEARCH_HOME"


def home() -> Path:
    """The base directory (default `~/.cache/guardsearch`)."""
    configured = os.environ.get(HOME_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "guardsearch"


def subdir(name: str) -> Path:
    """`home()/name`, created on demand."""
    path = home() / name
    path.mkdir(parents=True, exist_ok=True)
    return path
