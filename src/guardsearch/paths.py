"""Where guardsearch keeps files: one home directory, overridable by `GUARDSEARCH_HOME`."""

from __future__ import annotations

import os
from pathlib import Path

from guardsearch.core.errors import ConfigError

HOME_ENV = "GUARDSEARCH_HOME"


def home() -> Path:
    """The base directory (default `~/.cache/guardsearch`)."""
    configured = os.environ.get(HOME_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "guardsearch"


def subdir(name: str) -> Path:
    """`home()/name`, created on demand; a ConfigError if it cannot be (a
    `GUARDSEARCH_HOME` that is a file, or a folder that cannot be written)."""
    path = home() / name
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"cannot use {path} ({HOME_ENV}={home()}): {exc.strerror or exc}"
        ) from exc
    return path
