"""The refinement history in a JSON file, so later runs (and processes) learn from it.

    {"format": "guardsearch.refinement_history", "version": 1, "records": [...]}

`load_history` reads it (a missing or empty file is an empty history; a broken one is a
`ConfigError` naming the file, and nothing is written over it). `save_history` writes
atomically (a temporary file in the same directory, fsync, rename), so a crash never
leaves half a file. Saving one run merges it into what the file holds *now*: records
another process saved meanwhile are kept and the run gets the next free id. Only the
newest `MAX_RECORDS` records are kept.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from guardsearch.core.errors import ConfigError
from guardsearch.loops.review.history import RefinementHistory, RefinementRecord

FORMAT = "guardsearch.refinement_history"
VERSION = 1
MAX_RECORDS = 1000


def _broken(path: Path, why: str) -> ConfigError:
    return ConfigError(
        f"refinement history {path} {why}; fix the file or pass another path "
        "(it was left unchanged)"
    )


def load_history(path: str | Path) -> RefinementHistory:
    """The history stored in `path` (empty if the file does not exist or is empty)."""
    target = Path(path)
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        return RefinementHistory()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "is not UTF-8 text"
        raise _broken(target, f"cannot be read: {reason}") from exc
    if not text.strip():
        return RefinementHistory()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _broken(target, f"is not valid JSON (line {exc.lineno}: {exc.msg})") from exc
    records = data.get("records") if isinstance(data, dict) else data
    if isinstance(data, dict) and data.get("format", FORMAT) != FORMAT:
        raise _broken(target, f"is not a refinement history (format {data.get('format')!r})")
    if not isinstance(records, list):
        raise _broken(target, "has no list of records")
    try:
        return RefinementHistory([RefinementRecord.from_dict(_item(r)) for r in records])
    except (KeyError, TypeError, ValueError) as exc:
        raise _broken(target, f"holds an invalid record: {exc}") from exc


def open_history(
    history: str | Path | RefinementHistory | None,
) -> tuple[RefinementHistory, Path | None]:
    """The history a run learns from, and the file to merge the run into after it (when
    `history` names one): a file is loaded, a `RefinementHistory` is shared as it is."""
    if isinstance(history, RefinementHistory):
        return history, None
    if history is None:
        return RefinementHistory(), None
    return load_history(history), Path(history)


def _item(record: Any) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise TypeError(f"a record is an object, got {type(record).__name__}")
    return record


def save_history(history: RefinementHistory, path: str | Path, *, run: int | None = None) -> Path:
    """Write `history` to `path` atomically; with `run`, merge only that run's records
    into the file's current content (under a fresh run id)."""
    target = Path(path)
    records = history.records
    if run is not None:
        stored = load_history(target)
        fresh = stored.begin_run()
        records = [*stored.records]
        for record in history.of_run(run).records:
            records.append(
                RefinementRecord(
                    attempt=record.attempt,
                    refinement=record.refinement,
                    quality_before=record.quality_before,
                    quality_after=record.quality_after,
                    run=fresh,
                    domain=record.domain,
                    learned=record.learned,
                )
            )
    elif target.exists():
        load_history(target)  # never write over a file that is not a history
    payload = {
        "format": FORMAT,
        "version": VERSION,
        "records": [r.as_dict() for r in records[-MAX_RECORDS:]],
    }
    _write_atomic(target, json.dumps(payload, ensure_ascii=False, indent=1) + "\n")
    return target


def _write_atomic(target: Path, text: str) -> None:
    tmp: str | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp makes the file private; keep the mode of the file it replaces
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
        os.chmod(tmp, mode)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise ConfigError(f"cannot write refinement history {target}: {exc.strerror}") from exc
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
