"""Where trial results and traces go: a small seam, JSON Lines files by default.

`ResultStore` is what the runner needs: save a trial, load them all. `JsonlResults`
keeps `trials.jsonl` (one result per line, appended and flushed as each trial ends),
`traces.jsonl.gz` (every trial's events, one compressed record per trial: see
`experiments.traces`) and `manifest.json` under the experiment's out directory. A
durable run store can implement the same methods and be plugged in.

A stored trial is identified by its key (problem, label, trial, budget) *and* its
config fingerprint (suite, model spec, method, options): the same key run with another
model or other options is another trial, stored beside the first. Trials written
before fingerprints existed have none; the manifest records the config per label that
such trials are taken to have run with (see `ExperimentRunner`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from guardsearch.core.errors import ConfigError
from guardsearch.experiments.traces import ARCHIVE_NAME, LOOSE_DIR, TraceArchive
from guardsearch.experiments.trial import TrialResult
from guardsearch.jsonl import cut_torn_tail, json_line, jsonl_lines

MANIFEST_VERSION = 1


class ResultStore(Protocol):
    def finished(self) -> set[str]:
        """Keys of the trials already stored (whatever their config)."""
        ...

    def save(self, result: TrialResult, events: Sequence[dict[str, Any]]) -> None: ...

    def load(self) -> list[TrialResult]:
        """Every stored trial, the last one per (key, fingerprint)."""
        ...


@runtime_checkable
class ManifestStore(Protocol):
    """A result store that remembers, per method label, the config of its trials that
    carry no fingerprint."""

    def manifest(self) -> dict[str, dict[str, Any]]: ...

    def write_manifest(self, methods: dict[str, dict[str, Any]]) -> None: ...


class JsonlResults:
    """Trial results in `DIR/trials.jsonl`, every trial's trace in `DIR/traces.jsonl.gz`."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.path = self.root / "trials.jsonl"
        self.traces = TraceArchive(self.root / ARCHIVE_NAME)
        self.manifest_path = self.root / "manifest.json"

    def _check_layout(self) -> None:
        if (self.root / LOOSE_DIR).is_dir():
            raise ConfigError(
                f"{self.root / LOOSE_DIR} holds traces in the older one-file-per-trial layout; "
                f"move them into {self.traces.path} with `guardsearch bench pack {self.root}`"
            )

    def finished(self) -> set[str]:
        return {r.key for r in self.load()}

    def save(self, result: TrialResult, events: Sequence[dict[str, Any]]) -> None:
        # The trace first: a result line means its trace is complete.
        self._check_layout()
        self.traces.append(result.key, result.fingerprint, events)
        cut_torn_tail(self.path)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json_line(result.as_dict()))
            fh.flush()

    def load(self) -> list[TrialResult]:
        self._check_layout()
        if not self.path.exists():
            return []
        results: dict[tuple[str, str | None], TrialResult] = {}
        lines = jsonl_lines(self.path)
        for i, line in enumerate(lines):
            try:
                record = TrialResult.from_dict(json.loads(line))
            except (ValueError, TypeError):
                if i == len(lines) - 1:
                    break  # a torn last line: that trial was not finished
                raise
            results[(record.key, record.fingerprint)] = record
        return list(results.values())

    def events(self, trial: TrialResult | str) -> list[dict[str, Any]]:
        """A stored trial's trace; given only a key, the trace of the last trial stored
        under it."""
        if isinstance(trial, str):
            found = [r for r in self.load() if r.key == trial]
            return self.traces.events(trial, found[-1].fingerprint if found else None)
        return self.traces.events(trial.key, trial.fingerprint)

    def manifest(self) -> dict[str, dict[str, Any]]:
        """Per method label: the config its un-fingerprinted trials ran with."""
        if not self.manifest_path.exists():
            return {}
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
            methods = data["methods"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"unreadable manifest {self.manifest_path}: {exc}") from exc
        if not isinstance(methods, dict):
            raise ConfigError(f"unreadable manifest {self.manifest_path}")
        return {str(k): dict(v) for k, v in methods.items()}

    def write_manifest(self, methods: dict[str, dict[str, Any]]) -> None:
        data = {
            "version": MANIFEST_VERSION,
            "about": (
                "Per method label, the config (suite, model spec, method, options) of the "
                "first run into this directory. Trials in trials.jsonl without a "
                "fingerprint are reused only while the label's config still matches."
            ),
            "methods": methods,
        }
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.manifest_path.with_name(self.manifest_path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n", "utf-8")
        os.replace(tmp, self.manifest_path)
