"""The viewer's reads under /ui/api/runs: the list (and its stream), one run (its
record, its export, its event stream) and a node's model calls.

Each answers only about runs the caller may see (server/tenancy.py): another key's run
is left out of lists and is the 404 of an unknown id everywhere else.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from guardsearch.core.errors import ConfigError
from guardsearch.server.errors import error, not_found
from guardsearch.server.tenancy import Tenant, tenant_of
from guardsearch.server.ui_store import Viewer
from guardsearch.store.base import STATUSES, RunRecord, RunStore
from guardsearch.viewer.export import export_doc, record_json
from guardsearch.viewer.view import call_view, node_view, run_view

LIVE_POLL_S = 0.25  # how often the reader looks at the store while a run is running
IDLE_POLL_S = 1.0  # ... and while nothing runs (a paused run may be answered elsewhere)
KEEPALIVE_S = 15.0
MAX_LISTED = 500

router = APIRouter(prefix="/ui/api/runs", include_in_schema=False)


def viewer_of(request: Request) -> Viewer:
    viewer: Viewer = request.app.state.ui
    return viewer


def sse(kind: str, data: Any) -> bytes:
    payload = json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":"))
    return f"event: {kind}\ndata: {payload}\n\n".encode()


def stream(events: AsyncIterator[bytes]) -> StreamingResponse:
    return StreamingResponse(
        events,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def visible_record(request: Request, run_id: str) -> RunRecord | None:
    """The run's record when the caller may see it; None for an unknown id and for
    another key's run alike."""
    record = await viewer_of(request).record(run_id)
    return record if record is not None and tenant_of(request).sees(record) else None


def _listed(tenant: Tenant, status: str | None = None) -> Any:
    def read(store: RunStore) -> list[RunRecord]:
        # another key's runs are left out before the cut, so they never crowd it
        limit = None if tenant.keyed and not tenant.admin else MAX_LISTED
        return [r for r in store.list_runs(status=status, limit=limit) if tenant.sees(r)][
            :MAX_LISTED
        ]

    return read


@router.get("")
async def runs(
    request: Request,
    status: str | None = None,
    app_name: Annotated[str | None, Query(alias="app")] = None,
) -> Response:
    if status is not None and status not in STATUSES:
        return error("invalid_request", f"unknown status {status!r}", 400)
    records = await viewer_of(request).reader.read(_listed(tenant_of(request), status))
    return JSONResponse([record_json(r) for r in records if app_name in (None, r.app)])


@router.get("/stream")
async def runs_stream(request: Request) -> Response:
    reader, read = viewer_of(request).reader, _listed(tenant_of(request))

    async def events() -> AsyncIterator[bytes]:
        last: list[tuple[Any, ...]] | None = None
        idle = 0.0
        while not await request.is_disconnected():
            records = await reader.read(read)
            now = [(r.id, r.status, r.updated_at, r.calls) for r in records]
            if now != last:
                last, idle = now, 0.0
                yield sse("runs", [record_json(r) for r in records])
            elif idle >= KEEPALIVE_S:
                idle = 0.0
                yield b": keepalive\n\n"
            pause = LIVE_POLL_S if any(r.status == "running" for r in records) else IDLE_POLL_S
            idle += pause
            await asyncio.sleep(pause)

    return stream(events())


@router.get("/{run_id}")
async def show(run_id: str, request: Request) -> Response:
    """The run's record, as `runs show ID --json` prints it."""
    record = await visible_record(request, run_id)
    return not_found() if record is None else JSONResponse(record_json(record, full=True))


@router.get("/{run_id}/export")
async def export(run_id: str, request: Request) -> Response:
    """Everything the store holds about the run, as `runs export ID` writes it."""
    if await visible_record(request, run_id) is None:
        return not_found()
    try:
        doc = await viewer_of(request).reader.read(lambda s: export_doc(s, run_id))
    except ConfigError:
        return not_found()
    return JSONResponse(json.loads(json.dumps(doc, default=str)))


def _news(store: RunStore, *, run_id: str, after: int) -> tuple[RunRecord, list[dict[str, Any]]]:
    """The run's record and its events after seq `after`."""
    return store.get_run(run_id), store.events(run_id, after=after)


@router.get("/{run_id}/stream")
async def run_stream(run_id: str, request: Request) -> Response:
    """A `snapshot` event (run, nodes, events), then an `update` event (run, changed
    nodes, new events) whenever the store has something new."""
    first = await visible_record(request, run_id)
    reader = viewer_of(request).reader
    try:
        doc = (
            None
            if first is None
            else await reader.read(partial(export_doc, run_id=run_id, calls=False))
        )
    except ConfigError:
        doc = None
    if first is None or doc is None:
        return not_found()
    return stream(_run_events(request, reader, run_id, first, doc))


async def _run_events(
    request: Request, reader: Any, run_id: str, first: RunRecord, doc: dict[str, Any]
) -> AsyncIterator[bytes]:
    view = run_view(doc)
    sent = {n["id"]: n for n in view["nodes"]}
    last_seq = int(view["last_seq"])
    updated = first.updated_at, first.calls, first.status
    yield sse("snapshot", view)
    idle = 0.0
    while not await request.is_disconnected():
        pause = LIVE_POLL_S if doc["run"]["status"] == "running" else IDLE_POLL_S
        await asyncio.sleep(pause)
        record, new = await reader.read(partial(_news, run_id=run_id, after=last_seq))
        now = record.updated_at, record.calls, record.status
        if not new and now == updated:
            idle += pause
            if idle >= KEEPALIVE_S:
                idle = 0.0
                yield b": keepalive\n\n"
            continue
        idle = 0.0
        saved = await reader.read(lambda s: s.load_checkpoint(run_id))
        changed = []
        for raw in saved.nodes if saved is not None else []:
            node = node_view(raw)
            if sent.get(node["id"]) != node:
                sent[node["id"]] = node
                changed.append(node)
        doc["run"] = record_json(record, full=True)
        updated = now
        if new:
            last_seq = int(new[-1]["seq"])
        yield sse("update", {"run": doc["run"], "nodes": changed, "events": new})


def _node_calls(store: RunStore, *, run_id: str, node_id: str) -> dict[str, Any]:
    """The model calls behind a node: its own expansions' and the one that proposed it."""
    saved = store.load_checkpoint(run_id)
    parent = None
    for raw in saved.nodes if saved is not None else []:
        if raw.get("id") == node_id:
            parent = raw.get("parent")
    digests = {
        (e["data"].get("digest"), e["node"])
        for e in store.events(run_id)
        if e["kind"] == "model_call" and e["node"] in (node_id, parent)
    }
    calls = {c["digest"]: c for c in store.calls(run_id)}
    ordered = sorted(digests, key=str)
    return {
        "node": node_id,
        "proposed_by": [call_view(calls[d]) for d, n in ordered if n == parent and d in calls],
        "expanded_with": [call_view(calls[d]) for d, n in ordered if n == node_id and d in calls],
    }


@router.get("/{run_id}/nodes/{node_id}")
async def node_calls(run_id: str, node_id: str, request: Request) -> Response:
    if await visible_record(request, run_id) is None:
        return not_found()
    try:
        read = partial(_node_calls, run_id=run_id, node_id=node_id)
        return JSONResponse(await viewer_of(request).reader.read(read))
    except ConfigError:
        return not_found()
