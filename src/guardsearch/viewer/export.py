"""A run in the store as plain JSON data: the record as the CLI and the UI show it,
and the whole export (`guardsearch runs export`, `runs view`, the UI's run page)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from guardsearch.store.base import RunRecord, RunStore


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def record_json(record: RunRecord, *, full: bool = False) -> dict[str, Any]:
    """A run as the CLI prints it (`full` adds spec, result, fingerprint and counters)."""
    data: dict[str, Any] = {
        "id": record.id,
        "name": record.name,
        "status": record.status,
        "app": record.app,
        "strategy": record.strategy,
        "calls": record.calls,
        "tokens": record.tokens,
        "termination": record.termination,
        "created_at": iso(record.created_at),
        "updated_at": iso(record.updated_at),
    }
    if record.question is not None:
        data["question"] = record.question
    if record.error is not None:
        data["error"] = record.error
    if record.cancel_requested:
        data["cancel_requested"] = True
    if record.status == "running" and record.owner:
        data["owner"] = record.owner  # the worker holding it: host:pid:session
    if full:
        data.update(
            spec=record.spec,
            result=record.result,
            expansions=record.expansions,
            nodes=record.nodes,
            checkpoints=record.checkpoints,
            sessions=record.sessions,
            cost=record.cost,
            paused_node=record.paused_node,
            owner=record.owner,
            fingerprint=record.fingerprint,
        )
    return data


def export_doc(store: RunStore, run_id: str, *, calls: bool = True) -> dict[str, Any]:
    """Everything the store holds about one run: `{"run", "state", "events", "calls"}`
    (ConfigError for an unknown id). `calls=False` leaves the paid calls out."""
    from guardsearch.runs.checkpoint import restore  # the search layer: only when exporting

    record = store.get_run(run_id)
    saved = store.load_checkpoint(run_id)
    return {
        "run": record_json(record, full=True),
        "state": restore(saved) if saved is not None else None,
        "events": store.events(run_id),
        "calls": store.calls(run_id) if calls else [],
    }
