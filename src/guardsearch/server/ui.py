"""The run viewer over HTTP: the page at /ui and the JSON and event streams it reads.

    GET  /ui                              the page (no data in it; open, like /docs)
    GET  /ui/api/runs?status=&app=       the run store's runs, newest first
    GET  /ui/api/runs/stream              server-sent `runs` events as the list changes
    GET  /ui/api/runs/{id}                the run's record (as `runs show ID --json`)
    GET  /ui/api/runs/{id}/export         everything about the run (as `runs export ID`)
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

Reads are in server/ui_runs.py, actions in server/ui_actions.py, the store access in
server/ui_store.py. Every path under /ui/api takes the API key like the rest of the
service and answers about the caller's runs only (server/tenancy.py); the page keeps
the key in its session storage and sends it as `X-API-Key`, never in a URL (so the
streams are read with fetch, not EventSource, which cannot send headers).

The streams follow the store itself, not this process's runs: a run written by the
CLI, by POST /solve of another server or by a bench shows here as it is saved (to a
keyless server, or to an admin key). One reader thread tails the store (new events by
seq, the changed nodes after each checkpoint) and the page gets only what changed.
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI
from fastapi.responses import HTMLResponse

from guardsearch.models.base import Model
from guardsearch.server import ui_actions, ui_runs
from guardsearch.server.ui_store import StoreReader, Viewer
from guardsearch.store.open import open_store
from guardsearch.viewer.page import render_ui

UI_PATH = ui_actions.UI_PATH


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
    app.state.ui = Viewer(store_url, reader, model_spec=model_spec, model=model)
    app.state.ui_reader = reader
    page = APIRouter(include_in_schema=False)

    @page.get(UI_PATH, response_class=HTMLResponse)
    async def ui_page() -> HTMLResponse:
        return HTMLResponse(render_ui(needs_key=needs_key), headers={"Cache-Control": "no-store"})

    for router in (page, ui_runs.router, ui_actions.router):
        app.include_router(router)
