"""Structured logs and metrics hooks at phase boundaries (seed §17).

Phases are Events in the run's Trace (kind "phase"); this turns them into one JSON
log line each on the `guardsearch.research` logger, with the iteration, the token
budget left and the number of results, so logs and traces tell the same story.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from guardsearch.core.budget import Budget
from guardsearch.core.events import Event, Subscriber, Trace
from guardsearch.loops.research.state import ResearchState

logger = logging.getLogger("guardsearch.research")


def emit_phase(
    trace: Trace, phase: str, state: ResearchState, budget: Budget, **extra: Any
) -> Event:
    """A phase boundary with the seed's observability fields (`token_budget`: the
    tokens the run's budget has left, None when it does not limit tokens)."""
    return trace.emit(
        "phase",
        step="research",
        phase=phase,
        iteration=state.iteration,
        token_budget=budget.remaining().tokens,
        results=len(state.search_results),
        **extra,
    )


def phase_logger(run_id: str, log: logging.Logger = logger) -> Subscriber:
    """A Trace subscriber writing one JSON line per phase event."""

    def write(event: Event) -> None:
        if event.kind != "phase" or not log.isEnabledFor(logging.INFO):
            return
        record = {"event": "research_phase", "run_id": run_id, **event.data}
        log.info(json.dumps(record, ensure_ascii=False, default=str))

    return write
