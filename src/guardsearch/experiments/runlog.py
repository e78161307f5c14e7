"""Trials as runs in the run store (SQLite or Postgres), beside the JSONL results.

    guardsearch bench run benchmarks/game24.yaml --store runs.db

`RunStoreMirror` wraps the experiment's result store: every finished trial is saved
there as before (the JSONL files stay what resuming and scoring read) and is also
recorded as one run in a `RunStore`: app `bench:<suite>`, strategy the method label,
name the trial key, the trial as its spec, its config and fingerprint as the run's
fingerprint, status `succeeded` or `failed` with the termination, the calls and tokens,
the trial's events and its search tree (nodes rebuilt from the events, `tree_rows`).
`guardsearch runs list/show/export --store URL` then show them like any other run.

Live: when the executor runs trials in this process (`local`), `start` records the
trial as a running run as it begins and `LiveTrial` appends its events and nodes as
they happen (at each expansion's end, or every `FLUSH_S` seconds), so `/ui` follows a
bench trial node by node; `save` then completes that run exactly as `record_trial`
records a finished one. Trials that report only when finished (`ray`) are recorded
whole by `record_trial`, as they end.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from guardsearch.core.events import Event
from guardsearch.experiments.results import ManifestStore, ResultStore
from guardsearch.experiments.trial import TrialResult, TrialSpec
from guardsearch.store.base import CheckpointRows, RunRecord, RunStore

FLUSH_S = 0.5


def _stored(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if "kind" in e and "at" in e]


def tree_rows(events: Sequence[dict[str, Any]]) -> list[tuple[int, str, dict[str, Any]]]:
    """The search tree a trial's events describe, as checkpoint node rows.

    A search's `expansion` events name the expanded node (its depth at the start, its
    committed children at the end) and each judged candidate has a `guard_verdict`
    with its parent, status, score and feedback: enough for the viewer's tree (the
    texts are not in the events). Trials without a search (`io`, pipelines) have none.
    """
    nodes: dict[str, dict[str, Any]] = {}
    for e in events:
        data = e.get("data") or {}
        ident = str(e.get("node") or "")
        if not ident:
            continue
        if e.get("kind") == "expansion":
            if ident not in nodes and data.get("phase") == "start":
                depth = int(data.get("depth") or 0)
                nodes[ident] = {
                    "id": ident, "parent": None, "depth": depth, "step": e.get("step", ""),
                    "status": "root" if depth == 0 else "open", "expansions": 0,
                }  # fmt: skip
            node = nodes.get(ident)
            if node is not None and data.get("phase") == "end":
                node["expansions"] = int(node.get("expansions") or 0) + 1
                if node["status"] == "open":
                    node["status"] = "expanded"
        elif e.get("kind") == "guard_verdict" and data.get("parent"):
            parent = nodes.get(str(data["parent"]))
            node = nodes.setdefault(ident, {"id": ident, "expansions": 0})
            node.update(
                parent=str(data["parent"]),
                depth=(int(parent["depth"]) + 1) if parent is not None else 1,
                step=e.get("step", ""),
                status=str(data.get("status") or node.get("status") or "open"),
                h=data.get("h"),
                attempt=node.get("attempt"),
                verdict={
                    "guard": data.get("guard"),
                    "passed": data.get("passed"),
                    "score": data.get("score"),
                    "fatal": data.get("fatal"),
                    "feedback": data.get("feedback"),
                },
            )
    return [(i, ident, node) for i, (ident, node) in enumerate(nodes.items())]


def _counts(events: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """(expansions, nodes) the events describe."""
    expansions = sum(
        1
        for e in events
        if e.get("kind") == "expansion" and (e.get("data") or {}).get("phase") == "end"
    )
    return expansions, len(tree_rows(events))


def start_trial(runs: RunStore, spec: TrialSpec | TrialResult, *, suite: str) -> RunRecord:
    """Record a trial (about to run, or finished) as a running run; returns the run."""
    config = dict(spec.config or {})
    key = spec.key
    problem = spec.problem if isinstance(spec, TrialResult) else spec.problem.id
    method = spec.method if isinstance(spec, TrialResult) else spec.method.label
    record = runs.create_run(
        app=f"bench:{config.get('suite', suite)}",
        strategy=method,
        spec={
            "kind": "experiment_trial",
            "key": key,
            "problem": problem,
            "method": method,
            "trial": spec.trial,
            "budget": spec.budget,
            **config,
        },
        fingerprint={**config, "fingerprint": spec.fingerprint},
        name=key,
    )
    return runs.transition(record.id, "running")


def finish_trial(
    runs: RunStore,
    run_id: str,
    result: TrialResult,
    events: Sequence[dict[str, Any]],
    *,
    new: Sequence[dict[str, Any]] | None = None,
) -> RunRecord:
    """Complete a running trial's run: its usage, the events not stored yet (`new`;
    all of `events` when None), its tree, then its final status and result."""
    usage = {
        "calls": result.calls,
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
    }
    stored = _stored(events)
    expansions, count = _counts(stored)
    runs.save_checkpoint(
        run_id,
        CheckpointRows(
            frontier={},
            nodes=tree_rows(stored),
            usage=usage,
            expansions=expansions,
            node_count=count,
        ),
        stored if new is None else _stored(new),
    )
    return runs.transition(
        run_id,
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


def record_trial(
    runs: RunStore, result: TrialResult, events: Sequence[dict[str, Any]], *, suite: str
) -> RunRecord:
    """Record one finished trial as a finished run; returns the run."""
    record = start_trial(runs, result, suite=suite)
    return finish_trial(runs, record.id, result, events)


class LiveTrial:
    """A trace subscriber that appends a running trial's events (and its tree so far)
    to its run, in batches: at each expansion's end, or when `flush_s` has passed."""

    def __init__(self, runs: RunStore, run_id: str, *, flush_s: float = FLUSH_S) -> None:
        self.runs = runs
        self.run_id = run_id
        self.flush_s = flush_s
        self.events: list[dict[str, Any]] = []
        self.pending: list[dict[str, Any]] = []
        self.usage = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
        self.flushed = time.monotonic()

    def __call__(self, event: Event) -> None:
        row = event.as_dict()
        self.events.append(row)
        self.pending.append(row)
        if event.kind == "model_call":
            self.usage["calls"] += 1
            for name in ("prompt_tokens", "completion_tokens"):
                self.usage[name] += int(event.data.get(name) or 0)
        end = event.kind == "expansion" and event.data.get("phase") == "end"
        if end or time.monotonic() - self.flushed >= self.flush_s:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        expansions, count = _counts(self.events)
        self.runs.save_checkpoint(
            self.run_id,
            CheckpointRows(
                frontier={},
                nodes=tree_rows(self.events),
                usage=dict(self.usage),
                expansions=expansions,
                node_count=count,
            ),
            self.pending,
        )
        self.pending = []
        self.flushed = time.monotonic()

    def finish(self, result: TrialResult, events: Sequence[dict[str, Any]]) -> RunRecord:
        """Complete the run with the trial's result; `events` is its whole trace."""
        done = len(self.events) - len(self.pending)
        return finish_trial(self.runs, self.run_id, result, events, new=list(events)[done:])


class RunStoreMirror:
    """A ResultStore that also records every trial as a run in a RunStore: live from
    `start` when the executor calls it, else whole when the trial is saved."""

    def __init__(self, inner: ResultStore, runs: RunStore, *, suite: str) -> None:
        self.inner = inner
        self.runs = runs
        self.suite = suite
        self.live: dict[str, LiveTrial] = {}

    def start(self, spec: TrialSpec) -> Callable[[Event], None]:
        """Record `spec` as a running run; returns the subscriber for its trace."""
        record = start_trial(self.runs, spec, suite=self.suite)
        live = self.live[spec.key] = LiveTrial(self.runs, record.id)
        return live

    def abandon(self) -> None:
        """Mark the trials that started but never reported (the run stopped) failed."""
        for live in self.live.values():
            live.flush()
            self.runs.transition(
                live.run_id,
                "failed",
                termination="error",
                error="the bench stopped before this trial finished",
            )
        self.live.clear()

    def finished(self) -> set[str]:
        return self.inner.finished()

    def load(self) -> list[TrialResult]:
        return self.inner.load()

    def save(self, result: TrialResult, events: Sequence[dict[str, Any]]) -> None:
        self.inner.save(result, events)
        live = self.live.pop(result.key, None)
        if live is not None:
            live.finish(result, events)
        else:
            record_trial(self.runs, result, events, suite=self.suite)

    def manifest(self) -> dict[str, dict[str, Any]]:
        return self.inner.manifest() if isinstance(self.inner, ManifestStore) else {}

    def write_manifest(self, methods: dict[str, dict[str, Any]]) -> None:
        if isinstance(self.inner, ManifestStore):
            self.inner.write_manifest(methods)

    def events(self, trial: TrialResult | str) -> list[dict[str, Any]]:
        events_of = getattr(self.inner, "events", None)
        return list(events_of(trial)) if events_of is not None else []
