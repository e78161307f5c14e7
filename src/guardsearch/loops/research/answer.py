"""What a research run returns: a `ResearchRun` outcome around the service's
AgentResponse or ErrorResponse (`schemas.py`).

Code, not the model, fills these contracts: the sources are the verified citations
with their snippets, the citation report comes from the verification, and a run that
stopped on an error answers with the error's type, message and evidence.

Besides the core stop reasons (`budget_exhausted`: no tokens for another round with the
synthesis kept; `deadline`: the budget's seconds passed; `max_iterations`; the errors),
a research run stops because the reflection was `sufficient`, search was `degraded`,
there were `no_new_queries`, or no citation survived (`unverified_answer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from guardsearch.core.errors import BudgetExceeded, StepFailed
from guardsearch.core.outcome import Outcome
from guardsearch.core.source import Source
from guardsearch.core.usage import Usage
from guardsearch.kernel import Stop
from guardsearch.loops.research.citations import Verification, cut
from guardsearch.loops.research.schemas import (
    AgentResponse,
    AgentSource,
    CitationReport,
    ErrorResponse,
    PlanResponse,
    ReflectionResponse,
    ResponseMetadata,
    SynthesisResponse,
    UsageReport,
)
from guardsearch.loops.research.state import ResearchState

# ErrorResponse's error types for the core stop reasons (a failed step is told apart below).
_ERROR_TYPES = {
    "budget_exhausted": "budget_exceeded",
    "deadline": "timeout",
    "model_error": "model_error",
    "run_error": "run_error",
}


@dataclass(frozen=True, kw_only=True)
class ResearchRun(Outcome):
    """One research run: the response (answer or error), the final state, what each
    model phase produced, and the failed search attempts."""

    response: AgentResponse | ErrorResponse
    state: ResearchState
    search_failures: int = 0
    plan: PlanResponse | None = None
    reflections: list[ReflectionResponse] = field(default_factory=list)
    synthesis: SynthesisResponse | None = None
    verification: Verification | None = None

    def details(self) -> dict[str, Any]:
        error = isinstance(self.response, ErrorResponse)
        return {
            "iterations": self.state.iteration,
            "search_failures": self.search_failures,
            "response": self.response.model_dump(mode="json", exclude_none=error),
        }


# The characters of a source's text an answer's `sources` entry carries.
SNIPPET_CHARS = 300
NO_VERIFICATION = Verification(
    method="none", cited=(), verified=(), hallucinated=(), unsupported=(), unsupported_claims=()
)


def metadata(model: str, tokens: int) -> ResponseMetadata:
    return ResponseMetadata(
        timestamp=datetime.now(UTC).isoformat(timespec="seconds"), model=model, token_count=tokens
    )


def agent_source(source: Source, full_text: str) -> AgentSource:
    return AgentSource(
        id=source.id,
        title=source.title,
        type=source.kind,
        location=source.location,
        snippet=cut(full_text, SNIPPET_CHARS),
        provider=source.provider,
        license=source.license,
        attribution=source.attribution,
    )


def agent_response(
    state: ResearchState,
    answer: str,
    verification: Verification,
    sources: Sequence[AgentSource],
    *,
    stop_reason: str,
    usage: Usage,
    meta: ResponseMetadata,
) -> AgentResponse:
    """The AgentResponse of an answered run, from its final state."""
    return AgentResponse(
        summary=answer,
        final_answer=answer,
        sources=list(sources),
        citations=CitationReport(
            method=verification.method,
            verified=list(verification.verified),
            hallucinated=list(verification.hallucinated),
            unsupported=list(verification.unsupported),
            unsupported_claims=list(verification.unsupported_claims),
            removed_claims=list(verification.removed_claims),
        ),
        sufficient=state.sufficient,
        confidence=state.confidence,
        insufficient_termination=state.insufficient_termination,
        degraded_mode=state.degraded_mode,
        stop_reason=stop_reason,
        gaps=list(state.gaps),
        tier=state.tier,  # type: ignore[arg-type]
        iterations=state.iteration,
        queries=[r.query for r in state.queries_run],
        failed_queries=list(state.failed_queries),
        errors=[{k: v for k, v in e.__dict__.items() if v is not None} for e in state.error_log],
        usage=UsageReport(
            calls=usage.calls,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            total_tokens=usage.total_tokens,
        ),
        metadata=meta,
    )


def error_response(stop: Stop, run_id: str) -> ErrorResponse:
    """The ErrorResponse of a run a phase's error stopped, with the evidence."""
    error, phase = stop.error, stop.phase
    details: dict[str, object] = {"phase": phase, "run_id": run_id}
    if isinstance(error, StepFailed):
        last = error.last_artifact
        parse = last is not None and (
            last.parse_error is not None
            or any("schema violation" in f for f in error.feedback[-1:])
        )
        kind = (
            "parse_error"
            if parse
            else "unverified_answer"
            if phase == "synthesize"
            else "guard_failed"
        )
        return ErrorResponse.of(
            kind,
            f"{phase} failed: {error}",
            retryable=parse,
            details={**details, **error.evidence()},
        )
    if isinstance(error, BudgetExceeded):
        details["usage"] = error.usage.as_dict()
    return ErrorResponse.of(
        _ERROR_TYPES[stop.reason],
        f"{phase}: {error}",
        retryable=stop.reason == "model_error",
        details=details,
    )


def unverified_error(answer: str, verification: Verification, run_id: str) -> ErrorResponse:
    """No cited source survived verification: an error, never an uncited answer."""
    return ErrorResponse.of(
        "unverified_answer",
        "no cited source supports the answer after verification",
        retryable=False,
        details={
            "phase": "verify",
            "run_id": run_id,
            "answer": answer,
            "hallucinated": list(verification.hallucinated),
            "unsupported": list(verification.unsupported),
        },
    )
