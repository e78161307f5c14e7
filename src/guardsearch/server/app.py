"""The research service: FastAPI app factory.

    app = create_app()                                  # embedded model, offline corpus
    app = create_app(model=ScriptedModel(fn))           # tests: any Model object
    app = create_app(model_spec="openai:URL#name", provider_specs=["searxng:URL", "corpus"])

One router per resource: research (POST /run, /run-simple, /search, GET /runs/{id}:
server/research_routes.py), POST /solve (server/solve.py), GET /metrics and /healthz
(server/ops_routes.py), and with a run store the run viewer at /ui (server/ui.py). The
OpenAPI docs are at /docs. Middlewares, outermost first: the Host allow-list, tracing
(the caller's traceparent), the body limit, the API keys; `app.add_middleware` puts a
new one outside those added before it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from fastapi import FastAPI

from guardsearch.core.budget import Budget, BudgetLike
from guardsearch.loops.research.config import ResearchConfig, default_budget
from guardsearch.models.base import Model
from guardsearch.server import ops_routes, research_routes, solve
from guardsearch.server.errors import document_errors, install_error_handlers
from guardsearch.server.hosts import HostGuard
from guardsearch.server.security import (
    ADMIN_KEY_ENV,
    API_KEY_ENV,
    API_KEY_FILE_ENV,
    ApiKeyGuard,
    BodyLimit,
    hide_run_ids,
    read_keys,
)
from guardsearch.server.service import Service
from guardsearch.server.tracing import TraceRequests
from guardsearch.tools.base import SearchProvider
from guardsearch.tools.resilient import ResilienceSettings

MAX_BODY_BYTES = 64 * 1024
KeysLike = str | Sequence[str] | None


def create_app(
    *,
    model: Model | None = None,
    model_spec: str | None = None,
    providers: Sequence[SearchProvider] | None = None,
    provider_specs: Sequence[str] | None = None,
    config: ResearchConfig | None = None,
    budget: BudgetLike = None,
    resilience: ResilienceSettings | None = None,
    api_key: KeysLike = None,
    api_key_file: str | os.PathLike[str] | None = None,
    admin_key: KeysLike = None,
    allowed_hosts: Sequence[str] | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    max_concurrent_runs: int = 64,
    max_jobs: int = 1000,
    max_solve_calls: int = 200,
    run_store: str | None = None,
) -> FastAPI:
    """Build the research service. Nothing heavy happens until the first request.

    `budget` is every research run's default (None: `default_budget()`, from the
    environment); a request's `token_budget` and `max_execution_time_s` replace its caps.
    `api_key` (one key or several) and `api_key_file` (one key per line) name the keys
    a request may bring; with neither, `$GUARDSEARCH_API_KEY` (comma-separated) and
    `$GUARDSEARCH_API_KEY_FILE`; with no key at all, every endpoint is open and the
    server has one tenant. `admin_key` (default `$GUARDSEARCH_ADMIN_KEY`) may see and
    act on every key's runs (server/tenancy.py). `allowed_hosts`: the `Host` names the
    server answers (server/hosts.py; None: no check, as `guardsearch serve` sets it).
    `run_store` (a SQLite file or postgresql:// URL) serves the run viewer at /ui
    (server/ui.py) for the runs in that store.
    """
    service = Service(
        model=model,
        model_spec=model_spec,
        providers=providers,
        provider_specs=provider_specs,
        config=config or ResearchConfig.from_env(),
        budget=Budget.of(budget if budget is not None else default_budget()),
        resilience=resilience or ResilienceSettings(),
        max_concurrent_runs=max_concurrent_runs,
        max_jobs=max_jobs,
        max_solve_calls=max_solve_calls,
    )
    app = _app(service)
    keys, admins = _keys(api_key, api_key_file, admin_key)
    app.state.keyed = bool(keys or admins)
    # add_middleware puts each one outside the ones before it: the last added runs first
    if app.state.keyed:
        app.add_middleware(ApiKeyGuard, keys=keys, admin_keys=admins)
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    app.add_middleware(TraceRequests)  # the caller's traceparent, when tracing is on
    if allowed_hosts is not None:
        app.add_middleware(HostGuard, allowed=allowed_hosts)
    hide_run_ids()
    install_error_handlers(app)
    for router in (research_routes.router, solve.router, ops_routes.router):
        app.include_router(router)
    if run_store is not None:
        from guardsearch.server.ui import mount_ui

        mount_ui(app, run_store, needs_key=app.state.keyed, model_spec=model_spec, model=model)
    document_errors(app)
    return app


def _app(service: Service) -> FastAPI:
    from guardsearch import __version__

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await service.jobs.close()
        reader = getattr(app.state, "ui_reader", None)
        if reader is not None:
            reader.close()

    app = FastAPI(
        title="guardsearch research service",
        version=__version__,
        description="Plan -> search -> reflect -> synthesize with verified citations "
        "over an offline corpus. Answers cite retrieved sources only.",
        lifespan=lifespan,
    )
    app.state.service = service
    return app


def _keys(
    api_key: KeysLike, api_key_file: str | os.PathLike[str] | None, admin_key: KeysLike
) -> tuple[list[str], list[str]]:
    """The accepted keys and the admin keys, from the arguments or the environment."""
    if api_key is None and api_key_file is None:
        keys = read_keys(
            [os.environ.get(API_KEY_ENV, "")],
            [f for f in [os.environ.get(API_KEY_FILE_ENV)] if f],
        )
    else:
        given = [api_key] if isinstance(api_key, str) else list(api_key or [])
        keys = read_keys(given, [api_key_file] if api_key_file is not None else [])
    if admin_key is None:
        admins = read_keys([os.environ.get(ADMIN_KEY_ENV, "")])
    else:
        admins = read_keys([admin_key] if isinstance(admin_key, str) else list(admin_key))
    return keys, admins
