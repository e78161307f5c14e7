"""HTTP request and response bodies (pydantic at the edge)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from guardsearch.core.budget import Budget
from guardsearch.loops.research.schemas import AgentResponse, ErrorResponse

MAX_TASK_CHARS = 2000


class RunRequest(BaseModel):
    """`POST /run`. Old clients send only the task; every other field is optional."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    task: str = Field(
        min_length=1,
        max_length=MAX_TASK_CHARS,
        validation_alias=AliasChoices("task", "query", "question"),
        description="The research question (also accepted as `query` or `question`).",
    )
    complexity_tier: Literal["auto", "simple", "standard", "deep"] | None = Field(
        default=None, description="Override the tier; default: auto-detected by the planner."
    )
    max_iters: int | None = Field(default=None, ge=1, le=20)
    max_queries: int | None = Field(default=None, ge=1, le=30)
    max_sources: int | None = Field(default=None, ge=1, le=50)
    max_execution_time_s: float | None = Field(default=None, gt=0, le=900)
    token_budget: int | None = Field(default=None, ge=500, le=2_000_000)
    corpus: str | None = Field(
        default=None, max_length=64, description="Search only this named corpus."
    )
    support: Literal["lexical", "model", "off"] | None = Field(
        default=None,
        description="Claim support check: lexical (default), model (the model judges "
        "each claim/source pair) or off (cited ids must exist, nothing more).",
    )
    stream: bool = Field(default=False, description="Server-sent events, one per phase.")
    run_async: bool = Field(
        default=False,
        alias="async",
        description="Return 202 with a job id at once; poll GET /runs/{id}.",
    )

    def options(self) -> dict[str, Any]:
        return {
            "tier": self.complexity_tier,
            "max_iters": self.max_iters,
            "max_queries": self.max_queries,
            "max_sources": self.max_sources,
            "support": self.support,
        }

    def budget(self, default: Budget) -> Budget:
        """The run's budget: `default` with the request's tokens and seconds, if given."""
        return Budget.of(default, tokens=self.token_budget, seconds=self.max_execution_time_s)


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=500)
    k: int = Field(default=5, ge=1, le=50)
    corpus: str | None = Field(default=None, max_length=64)


class SourceOut(BaseModel):
    """A retrieved Source as `POST /search` returns it."""

    title: str
    location: str
    text: str
    provider: str
    kind: str
    rank: int
    license: str = ""
    attribution: str = ""


class SearchResponse(BaseModel):
    query: str
    results: list[SourceOut]
    provider: str | None = None
    reformulated_as: str | None = None
    error: str | None = None


class JobAccepted(BaseModel):
    id: str
    status: str
    status_url: str


class JobStatus(BaseModel):
    id: str
    status: Literal["pending", "running", "succeeded", "failed"]
    created_at: float
    finished_at: float | None = None
    phases: list[dict[str, Any]] = Field(default_factory=list)
    result: AgentResponse | ErrorResponse | None = None


class Health(BaseModel):
    status: str
    model: str
    providers: list[str]
    version: str


class SolveBudget(BaseModel):
    """Limits for one `POST /solve`; the server caps them (`max_solve_calls`)."""

    model_config = ConfigDict(extra="forbid")

    calls: int = Field(default=40, ge=1, description="Model calls at most.")
    tokens: int | None = Field(default=None, ge=1, description="Prompt + completion tokens.")
    seconds: float | None = Field(default=None, gt=0, le=900, description="Wall-clock limit.")


class SolveRequest(BaseModel):
    """`POST /solve`: run a guarded search of a registered app on one problem."""

    model_config = ConfigDict(extra="forbid")

    app: str = Field(
        default="game24", max_length=64, description="A registered search app (game24, plan)."
    )
    problem: dict[str, Any] = Field(description='The app\'s problem, e.g. {"numbers": "4 5 6 10"}.')
    strategy: str | None = Field(
        default=None, max_length=32, description="dfs, beam, astar, ... (default: the app's)."
    )
    options: dict[str, Any] = Field(
        default_factory=dict, description='Strategy options, e.g. {"width": 5}.'
    )
    budget: SolveBudget = Field(default_factory=SolveBudget)


class SolveResponse(BaseModel):
    """The result of a search: the winning path, or the best failed one."""

    app: str
    strategy: str
    model: str
    succeeded: bool
    termination: str
    answer: Any = None
    path: list[str]
    calls: int
    tokens: int
    expansions: int
    nodes: int
    seconds: float
    # How feedback steered the search: outputs, repeats, repeat_share, repairs, prevented.
    steering: dict[str, float] = Field(default_factory=dict)
