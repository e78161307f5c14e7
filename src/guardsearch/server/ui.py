"""The run viewer over HTTP: the page at /ui and the JSON and event streams it reads.

    GET  /ui                              the page (no data in it; open, like /docs)
    GET  /ui/api/runs?status=&app=       the run store's runs, newest first
    GET  /ui/api/runs/stream              server-sent `runs` events as the list changes
    GET  /ui/api/runs/{id}/stream         a `snapshot` event (run, nodes, events), then an
                                          `update` event (run, changed nodes, new events)
                                          whenever the store has something new
    GET  /ui/api/runs/{id}/nodes/{node}   the node's model calls (prompts and outputs)
    POST /ui/api/runs/{id}/resume         {"input": TEXT}: answer a paused run (as
                                          `runs resume ID --input TEXT`), 202
    POST /ui/api/runs/{id}/cancel         cancel a run (as `runs cancel ID`)
    GET  /ui/api/apps                     the apps a run may be started of (served ones)
    POST /ui/api/runs                     {"app", "problem", "strategy", "options",
                                          "budget", "name"}: start a durable run on the
                                          served model (as `runs start`), 202 + its id

Every path under /ui/api takes the API key like the rest of the service; the page
keeps the key in its session storage and sends it as `X-API-Key`, never in a URL
(so the streams are read with fetch, not EventSource, which cannot send headers).

The streams follow the store itself, not this process's runs: a run written by the
CLI, by POST /solve of another server or by a bench shows here as it is saved. One
reader thread tails the store (new events by seq, the changed nodes after each
checkpoint) and the page gets only what changed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import threading
from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, Field

from guardsearch.core.errors import ConfigError, GuardsearchError
from guardsearch.models.base import Model
from guardsearch.store.base import STATUSES, RunRecord, RunStore
from guardsearch.store.open import open_store
from guardsearch.viewer.export import export_doc, record_json
from guardsearch.viewer.page import render_ui
from guardsearch.viewer.view import call_view, node_view, run_view

log = logging.getLogger("guardsearch.server.ui")

T = TypeVar("T")

UI_PATH = "/ui"
LIVE_POLL_S = 0.25  # how often the reader looks at the store while a run is running
IDLE_POLL_S = 1.0  # ... and while nothing runs (a paused run may be answered elsewhere)
KEEPALIVE_S = 15.0
MAX_LISTED = 500
FINAL = ("succeeded",)


class ResumeBody(BaseModel):
    """The answer to a paused run's question."""

    input: str = Field(min_length=1, max_length=10_000)


class StartBody(BaseModel):
    """A durable run to start: a registered app (by name, never an import path: a
    request must not make the server import code) on the served model."""

    app: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_-]+$")
    problem: dict[str, Any] = Field(default_factory=dict)
    strategy: str | None = Field(default=None, max_length=40)
    options: dict[str, Any] = Field(default_factory=dict)
    budget: dict[str, float] = Field(default_factory=dict)
    name: str = Field(default="", max_length=200)


class StoreReader:
    """One thread that owns the reading connection (SQLite connections stay in the
    thread that made them); every read of the UI runs there, one at a time."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ui-store")
        self._local = threading.local()

    def _store(self) -> RunStore:
        store = getattr(self._local, "store", None)
        if store is None:
            store = self._local.store = open_store(self.url, read_only=True)
        return store

    async def read(self, fn: Callable[[RunStore], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: fn(self._store()))

    def close(self) -> None:
        def shut() -> None:
            store = getattr(self._local, "store", None)
            if store is not None:
                store.close()

        self._pool.submit(shut)
        self._pool.shutdown(wait=True)


def _news(store: RunStore, *, run_id: str, after: int) -> tuple[RunRecord, list[dict[str, Any]]]:
    """The run's record and its events after seq `after`."""
    return store.get_run(run_id), store.events(run_id, after=after)


def _event(kind: str, data: Any) -> bytes:
    payload = json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":"))
    return f"event: {kind}\ndata: {payload}\n\n".encode()


def _error(kind: str, message: str, status: int) -> JSONResponse:
    body = {"error": {"type": kind, "message": message, "retryable": False}}
    return JSONResponse(body, status_code=status)


def _stream(events: AsyncIterator[bytes]) -> StreamingResponse:
    return StreamingResponse(
        events,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def _resume_in_thread(url: str, run_id: str, text: str) -> None:
    """`runs resume RUN --input TEXT` in a thread of its own: its own event loop (the
    model may block) and its own connection to the store."""
    from guardsearch.runs.runner import execute_run

    store = open_store(url)
    try:
        record = asyncio.run(execute_run(run_id, store, human_input=text))
        log.info("run %s resumed from the UI: %s", run_id, record.status)
    except GuardsearchError as exc:
        log.warning("run %s: resume from the UI failed: %s", run_id, exc)
    except Exception:
        log.exception("run %s: resume from the UI failed", run_id)
    finally:
        store.close()


def _execute_in_thread(url: str, run_id: str, model: Model | None) -> None:
    """`execute_run` of a new run in a thread of its own (like `_resume_in_thread`)."""
    from guardsearch.runs.runner import execute_run

    store = open_store(url)
    try:
        record = asyncio.run(execute_run(run_id, store, model=model))
        log.info("run %s started from the API: %s", run_id, record.status)
    except Exception:
        log.exception("run %s: started from the API, failed", run_id)
    finally:
        store.close()


def mount_ui(
    app: FastAPI,
    store_url: str,
    *,
    needs_key: bool = False,
    model_spec: str | None = None,
    model: Model | None = None,
) -> None:
    """Serve the viewer for the store at `store_url` under /ui (opened now: a store that
    cannot be opened fails the server's start, not the first page). Runs started here
    use the served model: `model_spec` (default: the default spec), or a `model` object
    given to the app (tests), which then serves this process only."""
    open_store(store_url).close()  # creates or migrates it once, before any reader
    reader = StoreReader(store_url)
    resuming: set[str] = set()
    router = APIRouter(prefix=UI_PATH, include_in_schema=False)

    @router.get("", response_class=HTMLResponse)
    async def page() -> HTMLResponse:
        return HTMLResponse(render_ui(needs_key=needs_key), headers={"Cache-Control": "no-store"})

    @router.get("/api/runs")
    async def runs(
        status: str | None = None, app_name: Annotated[str | None, Query(alias="app")] = None
    ) -> Response:
        if status is not None and status not in STATUSES:
            return _error("invalid_request", f"unknown status {status!r}", 400)
        records = await reader.read(lambda s: s.list_runs(status=status, limit=MAX_LISTED))
        rows = [record_json(r) for r in records if app_name in (None, r.app)]
        return JSONResponse(rows)

    @router.get("/api/runs/stream")
    async def runs_stream(request: Request) -> Response:
        async def events() -> AsyncIterator[bytes]:
            last: list[tuple[Any, ...]] | None = None
            idle = 0.0
            while not await request.is_disconnected():
                records = await reader.read(lambda s: s.list_runs(limit=MAX_LISTED))
                now = [(r.id, r.status, r.updated_at, r.calls) for r in records]
                if now != last:
                    last, idle = now, 0.0
                    yield _event("runs", [record_json(r) for r in records])
                elif idle >= KEEPALIVE_S:
                    idle = 0.0
                    yield b": keepalive\n\n"
                busy = any(r.status == "running" for r in records)
                pause = LIVE_POLL_S if busy else IDLE_POLL_S
                idle += pause
                await asyncio.sleep(pause)

        return _stream(events())

    @router.get("/api/runs/{run_id}/stream")
    async def run_stream(run_id: str, request: Request) -> Response:
        try:
            # the record first: a change in between is sent again, never missed
            first, doc = await reader.read(
                lambda s: (s.get_run(run_id), export_doc(s, run_id, calls=False))
            )
        except ConfigError as exc:
            return _error("not_found", str(exc), 404)

        async def events() -> AsyncIterator[bytes]:
            view = run_view(doc)
            sent = {n["id"]: n for n in view["nodes"]}
            last_seq = int(view["last_seq"])
            updated = first.updated_at, first.calls, first.status
            yield _event("snapshot", view)
            idle = 0.0
            while not await request.is_disconnected():
                running = doc["run"]["status"] == "running"
                pause = LIVE_POLL_S if running else IDLE_POLL_S
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
                yield _event("update", {"run": doc["run"], "nodes": changed, "events": new})

        return _stream(events())

    @router.get("/api/runs/{run_id}/nodes/{node_id}")
    async def node_calls(run_id: str, node_id: str) -> Response:
        """The model calls behind a node: its own expansions' and the one that proposed it."""

        def read(store: RunStore) -> dict[str, Any]:
            store.get_run(run_id)
            saved = store.load_checkpoint(run_id)
            parent = None
            for raw in saved.nodes if saved is not None else []:
                if raw.get("id") == node_id:
                    parent = raw.get("parent")
            events = store.events(run_id)
            digests = {
                (e["data"].get("digest"), e["node"])
                for e in events
                if e["kind"] == "model_call" and e["node"] in (node_id, parent)
            }
            calls = {c["digest"]: c for c in store.calls(run_id)}
            return {
                "node": node_id,
                "proposed_by": [
                    call_view(calls[d])
                    for d, n in sorted(digests, key=str)
                    if n == parent and d in calls
                ],
                "expanded_with": [
                    call_view(calls[d])
                    for d, n in sorted(digests, key=str)
                    if n == node_id and d in calls
                ],
            }

        try:
            return JSONResponse(await reader.read(read))
        except ConfigError as exc:
            return _error("not_found", str(exc), 404)

    @router.post("/api/runs/{run_id}/resume", status_code=202)
    async def resume(run_id: str, body: ResumeBody) -> Response:
        try:
            record = await reader.read(lambda s: s.get_run(run_id))
        except ConfigError as exc:
            return _error("not_found", str(exc), 404)
        if record.status != "paused":
            return _error("conflict", f"run {run_id} is {record.status}, not paused", 409)
        if run_id in resuming:
            return _error("conflict", f"run {run_id} is being resumed already", 409)
        resuming.add(run_id)

        async def work() -> None:
            try:
                await asyncio.to_thread(_resume_in_thread, store_url, run_id, body.input)
            finally:
                resuming.discard(run_id)

        task = asyncio.create_task(work())
        app.state.ui_tasks.add(task)
        task.add_done_callback(app.state.ui_tasks.discard)
        return JSONResponse({"id": run_id, "status": "resuming"}, status_code=202)

    @router.post("/api/runs/{run_id}/cancel")
    async def cancel(run_id: str) -> Response:
        def do() -> dict[str, Any]:
            store = open_store(store_url)
            try:
                return record_json(store.cancel(run_id))
            finally:
                store.close()

        try:
            return JSONResponse(await asyncio.to_thread(do))
        except ConfigError as exc:
            kind, status = ("not_found", 404) if "no run" in str(exc) else ("conflict", 409)
            return _error(kind, str(exc), status)

    @router.get("/api/apps")
    async def apps() -> Response:
        from guardsearch.registry import app_names, get_app

        rows = []
        for name in app_names():
            found = get_app(name)
            if found.served:
                rows.append(
                    {
                        "name": name,
                        "summary": found.summary,
                        "strategy": found.strategy,
                        "example": found.example,
                    }
                )
        return JSONResponse(rows)

    @router.post("/api/runs", status_code=202)
    async def start(body: StartBody) -> Response:
        from guardsearch.models.spec import default_spec
        from guardsearch.registry import app_names, get_app
        from guardsearch.runs import RunSpec, create_run

        # as POST /solve: only apps that may be built from a request's problem
        served = [name for name in app_names() if get_app(name).served]
        if body.app not in served:
            known = ", ".join(served)
            return _error("invalid_request", f"unknown app {body.app!r}; one of {known}", 400)

        def create() -> str:
            spec = RunSpec(
                app=body.app,
                problem=body.problem,
                strategy=body.strategy or get_app(body.app).strategy,
                options=body.options,
                model=model_spec or default_spec(),
                budget=body.budget,
                name=body.name,
            )
            store = open_store(store_url)
            try:
                return create_run(spec, store).id
            finally:
                store.close()

        try:
            run_id = await asyncio.to_thread(create)
        except ConfigError as exc:
            return _error("invalid_request", str(exc), 400)
        task = asyncio.create_task(asyncio.to_thread(_execute_in_thread, store_url, run_id, model))
        app.state.ui_tasks.add(task)
        task.add_done_callback(app.state.ui_tasks.discard)
        url = f"{UI_PATH}#/run/{run_id}"
        return JSONResponse({"id": run_id, "status": "created", "view": url}, status_code=202)

    app.state.ui_tasks = set()
    app.state.ui_reader = reader
    app.include_router(router)
