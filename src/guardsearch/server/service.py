"""What the endpoints share (the model, providers, config, jobs, metrics), and a
research run that always ends in a response, plain or as server-sent events."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from fastapi import Request

from guardsearch.core.budget import Budget
from guardsearch.core.errors import ConfigError
from guardsearch.core.events import Event, Trace
from guardsearch.kernel import phase_record
from guardsearch.loops.research import ResearchLoop, ResearchRun
from guardsearch.loops.research.config import ResearchConfig
from guardsearch.loops.research.schemas import AgentResponse, ErrorResponse
from guardsearch.models.base import Model
from guardsearch.server.jobs import JobStore
from guardsearch.server.metrics import ServiceMetrics
from guardsearch.server.schemas import RunRequest
from guardsearch.tools.base import SearchError, SearchProvider
from guardsearch.tools.corpus_search import CorpusProvider
from guardsearch.tools.resilient import ResilienceSettings


class Service:
    """What the endpoints share: the model, providers, config, jobs, metrics, and the
    server-side limits no request can raise (`max_solve_calls`)."""

    def __init__(
        self,
        *,
        model: Model | None,
        model_spec: str | None,
        providers: Sequence[SearchProvider] | None,
        provider_specs: Sequence[str] | None,
        config: ResearchConfig,
        budget: Budget,
        resilience: ResilienceSettings,
        max_concurrent_runs: int,
        max_jobs: int,
        max_solve_calls: int,
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
        self.max_solve_calls = max_solve_calls
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


def service_of(request: Request) -> Service:
    """The app's Service (set by create_app)."""
    service: Service = request.app.state.service
    return service


async def safe_research(
    service: Service, body: RunRequest, trace: Trace, run_id: str
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


def sse_event(event: str, data: Any) -> bytes:
    payload = json.dumps(data, ensure_ascii=False, default=str)
    return f"event: {event}\ndata: {payload}\n\n".encode()


async def research_events(service: Service, body: RunRequest, run_id: str) -> AsyncIterator[bytes]:
    """One `phase` event per loop phase, the run's `run_end`, then one `result` (or
    `error`) event."""
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    trace = Trace()

    def forward(event: Event) -> None:
        if event.kind in ("phase", "run_end"):
            queue.put_nowait((event.kind, phase_record(event)))

    trace.subscribe(forward)

    async def work() -> None:
        run = await safe_research(service, body, trace, run_id)
        response = run.response
        if isinstance(response, AgentResponse):
            queue.put_nowait(("result", response.model_dump(mode="json")))
        else:
            queue.put_nowait(("error", response.model_dump(mode="json", exclude_none=True)))

    task = asyncio.create_task(work())
    try:
        yield sse_event("run", {"run_id": run_id})
        while True:
            kind, data = await queue.get()
            yield sse_event(kind, data)
            if kind in ("result", "error"):
                break
    finally:
        if not task.done():
            task.cancel()  # the client went away: stop spending on an answer nobody reads
