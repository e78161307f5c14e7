"""Prometheus metrics of the research service (docs/research.md), on a per-app registry.

A registry per app (not the process-global one) lets tests and embedders create
several apps in one process without duplicate-metric errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client.exposition import generate_latest

from guardsearch.loops.research import ResearchRun
from guardsearch.loops.research.schemas import ErrorResponse

_DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 90, 120, 180, 300, 600)
_ITERATION_BUCKETS = (0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20)


@dataclass
class ServiceMetrics:
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        self.duration = Histogram(
            "research_loop_duration_seconds",
            "Wall time of one research run.",
            registry=self.registry,
            buckets=_DURATION_BUCKETS,
        )
        self.iterations = Histogram(
            "iterations_per_request",
            "Loop iterations of one research run.",
            registry=self.registry,
            buckets=_ITERATION_BUCKETS,
        )
        self.search_failures = Counter(
            "search_failures",
            "Failed search attempts (each retry counts).",
            registry=self.registry,
        )
        self.requests = Counter(
            "research_requests",
            "Research runs by outcome.",
            ["outcome"],
            registry=self.registry,
        )

    def observe(self, run: ResearchRun) -> None:
        self.duration.observe(run.seconds)
        self.iterations.observe(run.state.iteration)
        if run.search_failures:
            self.search_failures.inc(run.search_failures)
        response = run.response
        outcome = response.error.type if isinstance(response, ErrorResponse) else "ok"
        self.requests.labels(outcome=outcome).inc()

    def observe_search(self, failures: int) -> None:
        """A `POST /search`: its failed attempts count like a run's."""
        if failures:
            self.search_failures.inc(failures)

    def exposition(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
