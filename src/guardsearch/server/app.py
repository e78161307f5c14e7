"""The research service: FastAPI app factory.

    app = create_app()                                  # embedded model, offline corpus
    app = create_app(model=ScriptedModel(fn))           # tests: any Model object
    app = create_app(model_spec="openai:URL#name", provider_specs=["searxng:URL", "corpus"])

Endpoints: POST /run (AgentResponse; `stream` -> server-sent events per phase,
`async` -> 202 + job id), POST /run-simple, POST /search, POST /solve, GET /runs/{id},
GET /metrics (Prometheus), GET /healthz, the OpenAPI docs at /docs, and with a run
store the run viewer at /ui (server/ui.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException

from guardsearch.core.budget import Budget, BudgetLike
from guardsearch.core.errors import ConfigError
from guardsearch.core.events import Event, Trace
from guardsearch.loops.kernel import phase_record
from guardsearch.loops.research import ResearchLoop, ResearchRun
from guardsearch.loops.research.config import ResearchConfig, default_budget
from guardsearch.loops.research.schemas import AgentResponse, ErrorResponse
from guardsearch.models.base import Model
from guardsearch.server.jobs import Job, JobStore
from guardsearch.server.metrics import ServiceMetrics
from guardsearch.server.schemas import (
    Health,
    JobAccepted,
    JobStatus,
    RunRequest,
    SearchRequest,
    SearchResponse,
    SolveRequest,
    SolveResponse,
    SourceOut,
)
from guardsearch.server.security import (
    API_KEY_ENV,
    API_KEY_FILE_ENV,
    KEY_SCOPE,
    OPEN_PATHS,
    ApiKeyGuard,
    BodyLimit,
    hide_run_ids,
    read_keys,
)
from guardsearch.server.tracing import TraceRequests
from guardsearch.tools.base import SearchError, SearchProvider
from guardsearch.tools.corpus_search import CorpusProvider
from guardsearch.tools.resilient import ResilienceSettings, ResilientSearch

MAX_BODY_BYTES = 64 * 1024

# How a run's error type maps to an HTTP status (the body is always the ErrorResponse).
STATUS = {
    "invalid_request": 400,
    "unauthorized": 401,
    "request_too_large": 413,
    "budget_exceeded": 422,
    "parse_error": 502,
    "guard_failed": 502,
    "unverified_answer": 502,
    "model_error": 502,
    "timeout": 504,
}


# The error type of an HTTP error raised by the framework (no such path, wrong method).
HTTP_ERROR_TYPES = {400: "invalid_request", 404: "not_found", 405: "method_not_allowed"}

log = logging.getLogger("guardsearch.server")


def error_status(error: ErrorResponse) -> int:
    return STATUS.get(error.error.type, 500)


class _Service:
    """What the endpoints share: the model, providers, config, jobs, metrics."""

    def __init__(
        self,
        model: Model | None,
        model_spec: str | None,
        providers: Sequence[SearchProvider] | None,
        provider_specs: Sequence[str] | None,
        config: ResearchConfig,
        budget: Budget,
        resilience: ResilienceSettings,
        max_concurrent_runs: int,
        max_jobs: int,
    ) -> None:
        self.model = model
        self.model_spec = model_spec
        self.providers = list(providers) if providers is not None else None
        self.provider_specs = list(provider_specs) if provider_specs else None
        self.config = config
        self.budget = budget
        self.resilience = resilience
        self.runs = asyncio.Semaphore(max_concurrent_runs)
        self.jobs = JobStore(max_jobs)
        self.metrics = ServiceMetrics()
        self._lock = asyncio.Lock()

    async def get_model(self) -> Model:
        """The model, loaded on first use (off the event loop: loading weights takes
        seconds)."""
        if self.model is None:
            async with self._lock:
                if self.model is None:
                    from guardsearch.models.spec import model_from_spec

                    self.model = await asyncio.to_thread(model_from_spec, self.model_spec)
        return self.model

    async def loop(self) -> ResearchLoop:
        """The research loop, building the model and providers on first use (off the event
        loop: indexing the corpus takes seconds)."""
        model = await self.get_model()
        if self.providers is None:
            async with self._lock:
                if self.providers is None:
                    from guardsearch.tools.spec import providers_from_specs

                    self.providers = await asyncio.to_thread(
                        providers_from_specs, self.provider_specs
                    )
        return ResearchLoop(
            model=model,
            providers=self.providers,
            config=self.config,
            resilience=self.resilience,
        )

    def providers_for(self, loop: ResearchLoop, corpus: str | None) -> list[SearchProvider]:
        if corpus is None:
            return list(loop.providers)
        out: list[SearchProvider] = []
        for p in loop.providers:
            if isinstance(p, CorpusProvider):
                try:
                    out.append(CorpusProvider(index=p.index, corpus=corpus))
                except SearchError as exc:
                    raise ConfigError(str(exc)) from exc
            else:
                out.append(p)
        return out

    async def research(self, body: RunRequest, trace: Trace, run_id: str) -> ResearchRun:
        loop = await self.loop()
        if body.corpus is not None:
            loop = ResearchLoop(
                model=loop.model,
                providers=self.providers_for(loop, body.corpus),
                config=loop.config,
                resilience=loop.resilience,
            )
        async with self.runs:
            run = await loop.run(
                body.task,
                budget=body.budget(self.budget),
                trace=trace,
                run_id=run_id,
                **body.options(),
            )
        self.metrics.observe(run)
        return run


def create_app(
    *,
    model: Model | None = None,
    model_spec: str | None = None,
    providers: Sequence[SearchProvider] | None = None,
    provider_specs: Sequence[str] | None = None,
    config: ResearchConfig | None = None,
    budget: BudgetLike = None,
    resilience: ResilienceSettings | None = None,
    api_key: str | Sequence[str] | None = None,
    api_key_file: str | os.PathLike[str] | None = None,
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
    `$GUARDSEARCH_API_KEY_FILE`; with no key at all, every endpoint is open.
    `run_store` (a SQLite file or postgresql:// URL) serves the run viewer at /ui
    (server/ui.py) for the runs in that store.
    """
    service = _Service(
        model,
        model_spec,
        providers,
        provider_specs,
        config or ResearchConfig.from_env(),
        Budget.of(budget if budget is not None else default_budget()),
        resilience or ResilienceSettings(),
        max_concurrent_runs,
        max_jobs,
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await service.jobs.close()
        reader = getattr(app.state, "ui_reader", None)
        if reader is not None:
            reader.close()

    from guardsearch import __version__

    app = FastAPI(
        title="guardsearch research service",
        version=__version__,
        description="Plan -> search -> reflect -> synthesize with verified citations "
        "over an offline corpus. Answers cite retrieved sources only.",
        lifespan=lifespan,
    )
    app.state.service = service
    if api_key is None and api_key_file is None:
        keys = read_keys(
            [os.environ.get(API_KEY_ENV, "")],
            [f for f in [os.environ.get(API_KEY_FILE_ENV)] if f],
        )
    else:
        given = [api_key] if isinstance(api_key, str) else list(api_key or [])
        keys = read_keys(given, [api_key_file] if api_key_file is not None else [])
    if keys:
        app.add_middleware(ApiKeyGuard, keys=keys)
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    app.add_middleware(TraceRequests)  # the caller's traceparent, when tracing is on
    hide_run_ids()

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(_problem(e) for e in exc.errors()[:5])
        error = ErrorResponse.of("invalid_request", problems or "invalid request", retryable=False)
        return JSONResponse(error.model_dump(exclude_none=True), status_code=400)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        # 404, 405, a body that is not JSON at all: the documented shape, like every error.
        kind = HTTP_ERROR_TYPES.get(exc.status_code, "http_error")
        error = ErrorResponse.of(kind, str(exc.detail), retryable=False)
        return _respond(error, exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> Response:
        # A bug must still answer in the documented shape, and say nothing of the server.
        log.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
        error = ErrorResponse.of("internal_error", "internal server error", retryable=True)
        return _respond(error, 500)

    async def run_endpoint(body: RunRequest, request: Request) -> Response:
        run_id = uuid.uuid4().hex[:16]
        if body.stream:
            return StreamingResponse(
                _sse(service, body, run_id),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
            )
        if body.run_async:

            async def work(job: Job) -> AgentResponse | ErrorResponse:
                trace = Trace()
                trace.subscribe(
                    lambda e: job.on_phase(phase_record(e)) if e.kind == "phase" else None
                )
                return (await _safe_research(service, body, trace, run_id)).response

            # The job's id is a bearer token of its own: not the run id that the phase
            # logs carry, and served only to the key that started it.
            job = service.jobs.start(work, owner=request.scope.get(KEY_SCOPE))
            url = f"/runs/{job.id}"
            accepted = JobAccepted(id=job.id, status="pending", status_url=url)
            return JSONResponse(accepted.model_dump(), status_code=202, headers={"Location": url})
        run = await _safe_research(service, body, Trace(), run_id)
        return _respond(run.response)

    @app.post(
        "/run",
        response_model=AgentResponse,
        summary="Research a question",
        responses={
            202: {"model": JobAccepted},
            400: {"model": ErrorResponse},
            422: {"model": ErrorResponse, "description": "Budget exceeded"},
            502: {"model": ErrorResponse},
            504: {"model": ErrorResponse},
        },
    )
    async def run(body: RunRequest, request: Request) -> Response:
        """Plan, search, reflect and synthesize an answer with verified citations."""
        return await run_endpoint(body, request)

    @app.post(
        "/run-simple",
        response_model=AgentResponse,
        summary="Research, simple tier",
        responses={
            202: {"model": JobAccepted},
            400: {"model": ErrorResponse},
            422: {"model": ErrorResponse, "description": "Budget exceeded"},
            502: {"model": ErrorResponse},
        },
    )
    async def run_simple(body: RunRequest, request: Request) -> Response:
        """Like /run with `complexity_tier` defaulting to "simple" (2 iterations, 3 queries)."""
        if body.complexity_tier is None:
            body = body.model_copy(update={"complexity_tier": "simple"})
        return await run_endpoint(body, request)

    @app.post(
        "/search",
        response_model=SearchResponse,
        summary="Search without a model",
        responses={503: {"model": SearchResponse, "description": "Every provider failed"}},
    )
    async def search(body: SearchRequest) -> Response:
        """One resilient search (retry, reformulation, fallback) over the providers."""
        loop = await service.loop()
        try:
            providers = service.providers_for(loop, body.corpus)
        except ConfigError as exc:
            return _respond(ErrorResponse.of("invalid_request", str(exc), retryable=False))
        search = ResilientSearch(providers, settings=service.resilience)
        outcome = await search.search(body.query, body.k)
        service.metrics.observe_search(search.failures)
        result = SearchResponse(
            query=body.query,
            provider=outcome.provider,
            reformulated_as=outcome.reformulated_as,
            error=outcome.error,
            results=[SourceOut.model_validate(h.as_dict()) for h in outcome.hits],
        )
        return JSONResponse(result.model_dump(), status_code=200 if not outcome.failed else 503)

    @app.post(
        "/solve",
        response_model=SolveResponse,
        summary="Solve a problem with a guarded search",
        responses={400: {"model": ErrorResponse}, 502: {"model": ErrorResponse}},
    )
    async def solve(body: SolveRequest) -> Response:
        """Search a built-in app's problem (e.g. Game of 24) with the named strategy."""
        from guardsearch.server.solve import solve as run_solve

        model = await service.get_model()
        async with service.runs:
            result = await run_solve(model, body, max_solve_calls)
        if isinstance(result, ErrorResponse):
            return _respond(result)
        return JSONResponse(result.model_dump(mode="json"))

    @app.get(
        "/runs/{run_id}",
        response_model=JobStatus,
        summary="Poll an async run",
        responses={404: {"model": ErrorResponse}},
    )
    async def get_run(run_id: str, request: Request) -> Response:
        """An async run's status, for the key that started it only (another key gets the
        same 404 as an unknown id: it learns nothing of other keys' runs)."""
        job = service.jobs.get(run_id)
        if job is None or job.owner != request.scope.get(KEY_SCOPE):
            return _respond(ErrorResponse.of("not_found", "no such run", retryable=False), 404)
        status = JobStatus(
            id=job.id,
            status=job.status,  # type: ignore[arg-type]
            created_at=job.created_at,
            finished_at=job.finished_at,
            phases=job.phases,
            result=job.result,
        )
        return JSONResponse(status.model_dump(mode="json"))

    @app.get("/metrics", summary="Prometheus metrics")
    async def metrics() -> Response:
        body, content_type = service.metrics.exposition()
        return Response(body, media_type=content_type)

    @app.get("/healthz", response_model=Health, summary="Liveness")
    async def healthz() -> Health:
        model_name = (
            service.model.name
            if service.model is not None
            else (service.model_spec or "default (not loaded yet)")
        )
        providers = (
            [p.name for p in service.providers]
            if service.providers is not None
            else list(service.provider_specs or ["corpus"])
        )
        return Health(status="ok", model=model_name, providers=providers, version=__version__)

    if run_store is not None:
        from guardsearch.server.ui import mount_ui

        mount_ui(app, run_store, needs_key=bool(keys), model_spec=model_spec, model=model)
    _document_errors(app)
    return app


def _document_errors(app: FastAPI) -> None:
    """Make the OpenAPI document say what the service answers on errors: an
    ErrorResponse with 400 for an invalid request (FastAPI would document its own 422,
    which this service never sends), 401 without a key, 413 for a body too large."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = build()
        error = {"$ref": "#/components/schemas/ErrorResponse"}
        answers = {
            "400": "Invalid request",
            "401": "Missing or wrong API key (when the server has keys)",
            "413": "Request body too large",
        }
        for path, operations in schema.get("paths", {}).items():
            for operation in operations.values():
                responses = operation.setdefault("responses", {})
                if "HTTPValidationError" in json.dumps(responses.get("422", "")):
                    del responses["422"]
                if path in OPEN_PATHS:
                    continue
                for code, what in answers.items():
                    responses.setdefault(
                        code,
                        {"description": what, "content": {"application/json": {"schema": error}}},
                    )
        for unused in ("HTTPValidationError", "ValidationError"):
            schema.get("components", {}).get("schemas", {}).pop(unused, None)
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


async def _safe_research(
    service: _Service, body: RunRequest, trace: Trace, run_id: str
) -> ResearchRun:
    """A run that always ends in a response: setup errors become ErrorResponses too, and
    are observed in the metrics like any other run."""
    started = time.monotonic()
    try:
        return await service.research(body, trace, run_id)
    except ConfigError as exc:
        error = ErrorResponse.of("invalid_request", str(exc), retryable=False)
    except Exception as exc:  # model loading and the like: report, never crash the server
        error = ErrorResponse.of("internal_error", f"{type(exc).__name__}: {exc}", retryable=True)
    from guardsearch.core.usage import Usage
    from guardsearch.loops.research.state import ResearchState

    state = ResearchState(task=body.task, max_iters=1)
    run = ResearchRun(
        succeeded=False,
        stop_reason=error.error.type,  # invalid_request or internal_error: core reasons
        run_id=run_id,
        response=error,
        state=state,
        trace=trace,
        usage=Usage(),
        seconds=time.monotonic() - started,
    )
    service.metrics.observe(run)
    return run


def _respond(
    response: AgentResponse | ErrorResponse,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    if isinstance(response, AgentResponse):
        return JSONResponse(response.model_dump(mode="json"))
    return JSONResponse(
        response.model_dump(mode="json", exclude_none=True),
        status_code=status or error_status(response),
        headers=headers,
    )


def _problem(error: Mapping[str, Any]) -> str:
    """One validation problem as `where: what` (a body that is no JSON says so)."""
    where = ".".join(str(p) for p in error["loc"][1:]) or "body"
    if error.get("type") == "json_invalid":
        why = (error.get("ctx") or {}).get("error", "")
        return f"body is not valid JSON{f' ({why})' if why else ''}"
    return f"{where}: {error['msg']}"


def _sse_event(event: str, data: Any) -> bytes:
    payload = json.dumps(data, ensure_ascii=False, default=str)
    return f"event: {event}\ndata: {payload}\n\n".encode()


async def _sse(service: _Service, body: RunRequest, run_id: str) -> AsyncIterator[bytes]:
    """One `phase` event per loop phase, then one `result` (or `error`) event."""
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    trace = Trace()

    def forward(event: Event) -> None:
        if event.kind == "phase":
            queue.put_nowait(("phase", phase_record(event)))

    trace.subscribe(forward)

    async def work() -> None:
        run = await _safe_research(service, body, trace, run_id)
        response = run.response
        if isinstance(response, AgentResponse):
            queue.put_nowait(("result", response.model_dump(mode="json")))
        else:
            queue.put_nowait(("error", response.model_dump(mode="json", exclude_none=True)))

    task = asyncio.create_task(work())
    try:
        yield _sse_event("run", {"run_id": run_id})
        while True:
            kind, data = await queue.get()
            yield _sse_event(kind, data)
            if kind in ("result", "error"):
                break
    finally:
        if not task.done():
            task.cancel()  # the client went away: stop spending on an answer nobody reads
