"""The research endpoints: POST /run, POST /run-simple, POST /search, and GET
/runs/{id} for an async run (served to the key that started it only)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from guardsearch.core.errors import ConfigError
from guardsearch.core.events import Trace
from guardsearch.core.outcome import new_run_id
from guardsearch.kernel import phase_record
from guardsearch.loops.research.schemas import AgentResponse, ErrorResponse
from guardsearch.server.errors import not_found, respond
from guardsearch.server.jobs import Job
from guardsearch.server.schemas import (
    JobAccepted,
    JobStatus,
    RunRequest,
    SearchRequest,
    SearchResponse,
    SourceOut,
)
from guardsearch.server.service import research_events, safe_research, service_of
from guardsearch.server.tenancy import tenant_of
from guardsearch.tools.resilient import ResilientSearch

router = APIRouter()

_RUN_ANSWERS: dict[int | str, dict[str, object]] = {
    202: {"model": JobAccepted},
    400: {"model": ErrorResponse},
    422: {"model": ErrorResponse, "description": "Budget exceeded"},
    502: {"model": ErrorResponse},
    504: {"model": ErrorResponse},
}


async def _run(body: RunRequest, request: Request) -> Response:
    service = service_of(request)
    run_id = new_run_id()
    if body.stream:
        return StreamingResponse(
            research_events(service, body, run_id),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    if body.run_async:

        async def work(job: Job) -> AgentResponse | ErrorResponse:
            trace = Trace()
            trace.subscribe(lambda e: job.on_phase(phase_record(e)) if e.kind == "phase" else None)
            return (await safe_research(service, body, trace, run_id)).response

        # The job's id is a bearer token of its own: not the run id that the phase
        # logs carry, and served only to the key that started it.
        job = service.jobs.start(work, owner=tenant_of(request).id)
        url = f"/runs/{job.id}"
        accepted = JobAccepted(id=job.id, status="pending", status_url=url)
        return JSONResponse(accepted.model_dump(), status_code=202, headers={"Location": url})
    run = await safe_research(service, body, Trace(), run_id)
    return respond(run.response)


@router.post("/run", response_model=AgentResponse, summary="Research a question",
             responses=_RUN_ANSWERS)  # fmt: skip
async def run(body: RunRequest, request: Request) -> Response:
    """Plan, search, reflect and synthesize an answer with verified citations."""
    return await _run(body, request)


@router.post("/run-simple", response_model=AgentResponse, summary="Research, simple tier",
             responses=_RUN_ANSWERS)  # fmt: skip
async def run_simple(body: RunRequest, request: Request) -> Response:
    """Like /run with `complexity_tier` defaulting to "simple" (2 iterations, 3 queries)."""
    if body.complexity_tier is None:
        body = body.model_copy(update={"complexity_tier": "simple"})
    return await _run(body, request)


@router.post(
    "/search",
    response_model=SearchResponse,
    summary="Search without a model",
    responses={503: {"model": SearchResponse, "description": "Every provider failed"}},
)
async def search(body: SearchRequest, request: Request) -> Response:
    """One resilient search (retry, reformulation, fallback) over the providers."""
    service = service_of(request)
    loop = await service.loop()
    try:
        providers = service.providers_for(loop, body.corpus)
    except ConfigError as exc:
        return respond(ErrorResponse.of("invalid_request", str(exc), retryable=False))
    searcher = ResilientSearch(providers, settings=service.resilience)
    outcome = await searcher.search(body.query, body.k)
    service.metrics.observe_search(searcher.failures)
    result = SearchResponse(
        query=body.query,
        provider=outcome.provider,
        reformulated_as=outcome.reformulated_as,
        error=outcome.error,
        results=[SourceOut.model_validate(h.as_dict()) for h in outcome.hits],
    )
    return JSONResponse(result.model_dump(), status_code=200 if not outcome.failed else 503)


@router.get(
    "/runs/{run_id}",
    response_model=JobStatus,
    summary="Poll an async run",
    responses={404: {"model": ErrorResponse}},
)
async def get_run(run_id: str, request: Request) -> Response:
    """An async run's status, for the key that started it only (another key gets the
    same 404 as an unknown id: it learns nothing of other keys' runs)."""
    job = service_of(request).jobs.get(run_id)
    if job is None or not tenant_of(request).owns(job.owner):
        return not_found()
    status = JobStatus(
        id=job.id,
        status=job.status,  # type: ignore[arg-type]
        created_at=job.created_at,
        finished_at=job.finished_at,
        phases=job.phases,
        result=job.result,
    )
    return JSONResponse(status.model_dump(mode="json"))
