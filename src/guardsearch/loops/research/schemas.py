"""The research loop's JSON contracts (plan, reflection, synthesis, errors), as pydantic models.

Two kinds live here:

- *drafts* (`PlanDraft`, `ReflectionDraft`, `SynthesisDraft`) are what the model must
  produce. They are sent as JSON Schemas for constrained decoding, so they are small
  and bounded (maxLength / maxItems): a 0.5B model cannot run away inside them, and
  it is never asked for what code knows better (timestamps, token counts, titles).
- *responses* (`PlanResponse`, `ReflectionResponse`, `SynthesisResponse`,
  `ErrorResponse`, `AgentResponse`) are the service's contracts that code fills in.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

TierName = Literal["simple", "standard", "deep"]
AnswerStatus = Literal["verified", "unverified", "not_found"]
SourceId = Annotated[str, Field(pattern=r"^\[[0-9]{1,3}\]$", max_length=5)]


class PlanQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=2, max_length=80)
    intent: str = Field(max_length=60)


class PlanDraft(BaseModel):
    """What the planner writes: a complexity guess and 3-6 focused queries with intents."""

    model_config = ConfigDict(extra="forbid")

    complexity: TierName
    queries: list[PlanQuery] = Field(min_length=3, max_length=6)


class ReflectionDraft(BaseModel):
    """What the reflector writes: enough or not, how sure, what is missing, what to search."""

    model_config = ConfigDict(extra="forbid")

    sufficient: bool
    confidence: float = Field(ge=0.0, le=1.0)
    gaps: list[Annotated[str, Field(max_length=80)]] = Field(max_length=3)
    new_queries: list[PlanQuery] = Field(max_length=4)


class SynthesisDraft(BaseModel):
    """What the synthesiser writes: an answer citing sources by id only."""

    model_config = ConfigDict(extra="forbid")

    answer: str = Field(min_length=1, max_length=900)
    citations: list[SourceId] = Field(max_length=6)


class ResponseMetadata(BaseModel):
    timestamp: str
    model: str
    token_count: int


class PlanResponse(BaseModel):
    queries: list[PlanQuery]


class ReflectionResponse(BaseModel):
    sufficient: bool
    confidence: float
    gaps: list[str]
    new_queries: list[PlanQuery]
    metadata: ResponseMetadata


class Citation(BaseModel):
    """A cited source, resolved by code from the retrieved set (never from the model)."""

    id: str
    title: str
    type: str
    location: str


class SynthesisResponse(BaseModel):
    answer: str
    citations: list[Citation]
    metadata: ResponseMetadata


class ErrorDetail(BaseModel):
    type: str
    message: str
    retryable: bool
    details: dict[str, object] | None = None


class ErrorResponse(BaseModel):
    """How every failure surfaces (never a crash, never a silent empty answer)."""

    error: ErrorDetail

    @classmethod
    def of(
        cls, type: str, message: str, *, retryable: bool, details: dict[str, object] | None = None
    ) -> ErrorResponse:
        return cls(
            error=ErrorDetail(type=type, message=message, retryable=retryable, details=details)
        )


class AgentSource(BaseModel):
    """A verified source: cited by the answer, retrieved by search, supporting its claim."""

    id: str
    title: str
    type: str
    location: str
    snippet: str = ""
    provider: str = ""
    license: str = ""
    attribution: str = ""


class CitationReport(BaseModel):
    """What citation verification found (citations.py)."""

    method: str
    verified: list[str] = Field(default_factory=list)
    hallucinated: list[str] = Field(default_factory=list)
    unsupported: list[str] = Field(default_factory=list)
    unsupported_claims: list[str] = Field(default_factory=list)
    # Sentences removed from the answer because no retrieved source supports them.
    removed_claims: list[str] = Field(default_factory=list)


class UsageReport(BaseModel):
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class AgentResponse(BaseModel):
    """The external answer of `/run` (docs/server.md), backwards compatible.

    Old clients read `summary` and `sources`; `final_answer` is the same text under its
    new name; everything else is new and optional for them.
    """

    summary: str
    final_answer: str
    sources: list[AgentSource]
    citations: CitationReport
    sufficient: bool
    confidence: float
    insufficient_termination: bool
    degraded_mode: bool
    stop_reason: str = ""
    gaps: list[str] = Field(default_factory=list)
    tier: TierName = "standard"
    iterations: int = 0
    queries: list[str] = Field(default_factory=list)
    failed_queries: list[str] = Field(default_factory=list)
    errors: list[dict[str, object]] = Field(default_factory=list)
    usage: UsageReport = Field(default_factory=UsageReport)
    seconds: float = 0.0
    run_id: str = ""
    metadata: ResponseMetadata | None = None
    # How the guards' feedback steered the run (core/steering.py, from its trace):
    # outputs, repeats, repeat_share, repairs, prevented.
    steering: dict[str, float] = Field(default_factory=dict)
    # verified: a retrieved source states the answer as the answer to the question;
    # unverified: the model's answer, which the guards could not confirm (its verdicts
    # say why; the sources it cited are listed); not_found: the sources do not say.
    status: AnswerStatus = "verified"
    verdicts: list[str] = Field(default_factory=list)
    # The model's own last draft when it is not the answer given (a not_found run).
    draft: str = ""
