"""Structured logs and metrics hooks at phase boundaries (docs/research.md).

Phases are Events in the run's Trace (kind "phase", emitted by the run kernel with
`phase_fields` on each, and the run's `run_end`); this turns them into one JSON log
line each on the `guardsearch.research` logger (`research_phase`, `research_end`),
with the iteration, the token budget left and the number of results, so logs and
traces tell the same story.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from guardsearch.core.budget import Budget
from guardsearch.core.events import Event, Subscriber
from guardsearch.kernel import phase_record
from guardsearch.loops.research.state import ResearchState

logger = logging.getLogger("guardsearch.research")


def phase_fields(state: ResearchState, budget: Budget) -> dict[str, Any]:
    """The observability fields on every phase event (`token_budget`: the tokens
    the run's budget has left, None when it does not limit tokens)."""
    return {
        "iteration": state.iteration,
        "token_budget": budget.remaining().tokens,
        "results": len(state.search_results),
    }


def phase_logger(run_id: str, log: logging.Logger = logger) -> Subscriber:
    """A Trace subscriber writing one JSON line per phase event."""

    def write(event: Event) -> None:
        if event.kind not in ("phase", "run_end") or not log.isEnabledFor(logging.INFO):
            return
        name = "research_phase" if event.kind == "phase" else "research_end"
        record = {"event": name, "run_id": run_id, **phase_record(event)}
        log.info(json.dumps(record, ensure_ascii=False, default=str))

    return write
