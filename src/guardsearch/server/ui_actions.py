"""The viewer's actions under /ui/api: answer a paused run, cancel a run, start a
durable run of a served app, and list the apps that may be started.

A run started here belongs to the caller's key (`RunSpec.tenant`); resume and cancel
act only on runs the caller may see (server/tenancy.py), another key's are a 404.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from guardsearch.core.errors import ConfigError
from guardsearch.server.errors import error, not_found
from guardsearch.server.solve import check_request_options, served_apps
from guardsearch.server.tenancy import tenant_of
from guardsearch.server.ui_runs import viewer_of, visible_record
from guardsearch.server.ui_store import execute_in_thread, resume_in_thread
from guardsearch.store.base import RunStore
from guardsearch.viewer.export import record_json

UI_PATH = "/ui"
router = APIRouter(prefix="/ui/api", include_in_schema=False)


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


@router.post("/runs/{run_id}/resume", status_code=202)
async def resume(run_id: str, body: ResumeBody, request: Request) -> Response:
    """Answer a paused run (as `runs resume ID --input TEXT`), 202."""
    viewer = viewer_of(request)
    record = await visible_record(request, run_id)
    if record is None:
        return not_found()
    if record.status != "paused":
        return error("conflict", f"run {run_id} is {record.status}, not paused", 409)
    if run_id in viewer.resuming:
        return error("conflict", f"run {run_id} is being resumed already", 409)
    viewer.resuming.add(run_id)

    async def work() -> None:
        try:
            await asyncio.to_thread(resume_in_thread, viewer.store_url, run_id, body.input)
        finally:
            viewer.resuming.discard(run_id)

    viewer.background(work())
    return JSONResponse({"id": run_id, "status": "resuming"}, status_code=202)


@router.post("/runs/{run_id}/cancel")
async def cancel(run_id: str, request: Request) -> Response:
    """Cancel a run (as `runs cancel ID`)."""
    if await visible_record(request, run_id) is None:
        return not_found()
    try:
        do = viewer_of(request).with_store(lambda s: record_json(s.cancel(run_id)))
        return JSONResponse(await asyncio.to_thread(do))
    except ConfigError as exc:
        return not_found() if "no run" in str(exc) else error("conflict", str(exc), 409)


@router.get("/apps")
async def apps() -> Response:
    """The apps a run may be started of (served ones)."""
    from guardsearch.registry import get_app

    rows = []
    for name in served_apps():
        found = get_app(name)
        rows.append({"name": name, "summary": found.summary, "strategy": found.strategy,
                     "example": found.example})  # fmt: skip
    return JSONResponse(rows)


@router.post("/runs", status_code=202)
async def start(body: StartBody, request: Request) -> Response:
    """Start a durable run on the served model (as `runs start`), 202 + its id; it
    belongs to the caller's key."""
    from guardsearch.models.spec import default_spec
    from guardsearch.registry import get_app
    from guardsearch.runs import RunSpec, create_run

    viewer = viewer_of(request)
    served = served_apps()  # as POST /solve: only apps a request's problem may build
    if body.app not in served:
        return error(
            "invalid_request", f"unknown app {body.app!r}; one of {', '.join(served)}", 400
        )
    try:
        spec = RunSpec(
            app=body.app,
            problem=body.problem,
            strategy=body.strategy or get_app(body.app).strategy,
            options=check_request_options(body.options),
            model=viewer.model_spec or default_spec(),
            budget=body.budget,
            name=body.name,
            tenant=tenant_of(request).stamp,
        )

        def create(store: RunStore) -> str:
            return create_run(spec, store).id

        run_id = await asyncio.to_thread(viewer.with_store(create))
    except ConfigError as exc:
        return error("invalid_request", str(exc), 400)
    work = asyncio.to_thread(execute_in_thread, viewer.store_url, run_id, viewer.model)
    viewer.background(work)
    url = f"{UI_PATH}#/run/{run_id}"
    return JSONResponse({"id": run_id, "status": "created", "view": url}, status_code=202)
