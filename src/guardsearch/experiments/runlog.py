"""Trials as runs in the run store (SQLite or Postgres), beside the JSONL results.

    guardsearch bench run benchmarks/game24.yaml --store runs.db

`RunStoreMirror` wraps the experiment's result store: every finished trial is saved
there as before (the JSONL files stay what resuming and scoring read) and is also
recorded as one finished run in a `RunStore`: app `bench:<suite>`, strategy the method
label, name the trial key, the trial as its spec, its config and fingerprint as the
run's fingerprint, status `succeeded` or `failed` with the termination, the calls and
tokens, and the trial's events. `guardsearch runs list/show/export --store URL` then
show them like any other run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from guardsearch.experiments.results import ManifestStore, ResultStore
from guardsearch.experiments.trial import TrialResult
from guardsearch.store.base import CheckpointRows, RunRecord, RunStore


def record_trial(
    runs: RunStore, result: TrialResult, events: Sequence[dict[str, Any]], *, suite: str
) -> RunRecord:
    """Record one finished trial as a finished run; returns the run."""
    config = dict(result.config or {})
    record = runs.create_run(
        app=f"bench:{config.get('suite', suite)}",
        strategy=result.method,
        spec={
            "kind": "experiment_trial",
            "key": result.key,
            "problem": result.problem,
            "method": result.method,
            "trial": result.trial,
            "budget": result.budget,
            **config,
        },
        fingerprint={**config, "fingerprint": result.fingerprint},
        name=result.key,
    )
    runs.transition(record.id, "running")
    usage = {
        "calls": result.calls,
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
    }
    runs.save_checkpoint(
        record.id,
        CheckpointRows(frontier={}, usage=usage),
        [e for e in events if "kind" in e and "at" in e],
    )
    return runs.transition(
        record.id,
        "succeeded" if result.succeeded else "failed",
        termination=result.termination,
        result={
            "succeeded": result.succeeded,
            "answer": result.answer,
            "model": result.model,
            "calls": result.calls,
            "tokens": result.tokens,
            "cached_prompt_tokens": result.cached_prompt_tokens,
            "seconds": result.seconds,
            "backtracks": result.backtracks,
        },
    )


class RunStoreMirror:
    """A ResultStore that also records every saved trial as a run in a RunStore."""

    def __init__(self, inner: ResultStore, runs: RunStore, *, suite: str) -> None:
        self.inner = inner
        self.runs = runs
        self.suite = suite

    def finished(self) -> set[str]:
        return self.inner.finished()

    def load(self) -> list[TrialResult]:
        return self.inner.load()

    def save(self, result: TrialResult, events: Sequence[dict[str, Any]]) -> None:
        self.inner.save(result, events)
        record_trial(self.runs, result, events, suite=self.suite)

    def manifest(self) -> dict[str, dict[str, Any]]:
        return self.inner.manifest() if isinstance(self.inner, ManifestStore) else {}

    def write_manifest(self, methods: dict[str, dict[str, Any]]) -> None:
        if isinstance(self.inner, ManifestStore):
            self.inner.write_manifest(methods)

    def events(self, trial: TrialResult | str) -> list[dict[str, Any]]:
        events_of = getattr(self.inner, "events", None)
        return list(events_of(trial)) if events_of is not None else []
