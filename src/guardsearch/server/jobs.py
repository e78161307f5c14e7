"""Async research jobs (`"async": true`): in-memory, bounded, polled by GET /runs/{id}.

Jobs live in the server process; the oldest finished ones are evicted past
`max_jobs`. Durable runs belong to the store layer; this is polling
(docs/server.md), not a queue. A job's id is an unguessable token (128 random bits),
and a job remembers the API key that started it (`owner`, a key id), so that the
server can serve it to that key only.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from guardsearch.loops.research.schemas import AgentResponse, ErrorResponse

_PHASES_KEPT = 50


@dataclass
class Job:
    id: str
    owner: str | None = None
    status: str = "pending"
    created_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    phases: list[dict[str, Any]] = field(default_factory=list)
    result: AgentResponse | ErrorResponse | None = None

    def on_phase(self, data: dict[str, Any]) -> None:
        self.phases.append(data)
        del self.phases[:-_PHASES_KEPT]


class JobStore:
    def __init__(self, max_jobs: int = 1000) -> None:
        self.max_jobs = max_jobs
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._tasks: set[asyncio.Task[None]] = set()

    def get(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id)

    def start(
        self,
        work: Callable[[Job], Awaitable[AgentResponse | ErrorResponse]],
        *,
        owner: str | None = None,
    ) -> Job:
        """Run `work` as a new job with a fresh token id, started by `owner` (a key id)."""
        job = Job(id=secrets.token_urlsafe(16), owner=owner)
        self._jobs[job.id] = job
        self._evict()

        async def runner() -> None:
            job.status = "running"
            try:
                job.result = await work(job)
            except Exception as exc:  # work never raises by design; keep the job honest anyway
                job.result = ErrorResponse.of(
                    "internal_error", f"{type(exc).__name__}: {exc}", retryable=False
                )
            job.status = "succeeded" if isinstance(job.result, AgentResponse) else "failed"
            job.finished_at = time.time()

        task = asyncio.create_task(runner())
        self._tasks.add(task)  # keep a reference: the loop holds tasks only weakly
        task.add_done_callback(self._tasks.discard)
        return job

    def _evict(self) -> None:
        while len(self._jobs) > self.max_jobs:
            victim = next((k for k, j in self._jobs.items() if j.finished_at is not None), None)
            if victim is None:
                break
            del self._jobs[victim]

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
