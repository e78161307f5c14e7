"""The RunStore protocol: what a durable run needs from a database, as plain data.

A run has an id, its spec (what to run: app, problem, strategy, options, model,
budget), a status lifecycle, an append-only event log, the search's frontier and
tree (saved incrementally after every expansion, in one transaction with the events
since the last save), and a memo of paid model calls by request digest.

The store knows nothing of searches: the layer above turns a `SearchState` into
rows (`CheckpointRows`) and back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from guardsearch.core.errors import ConfigError

RunStatus = Literal["created", "running", "paused", "succeeded", "failed", "cancelled"]
STATUSES: tuple[RunStatus, ...] = (
    "created",
    "running",
    "paused",
    "succeeded",
    "failed",
    "cancelled",
)

# running -> running is a takeover after a crash (the owner died without a word).
TRANSITIONS: dict[str, frozenset[str]] = {
    "created": frozenset({"running", "cancelled"}),
    "running": frozenset({"running", "paused", "succeeded", "failed", "cancelled"}),
    "paused": frozenset({"running", "cancelled"}),
    "failed": frozenset({"running", "cancelled"}),
    "cancelled": frozenset({"running"}),
    "succeeded": frozenset(),
}


def check_transition(run_id: str, old: str, new: str) -> None:
    """Raise ConfigError unless the lifecycle allows `old` -> `new`."""
    if new not in STATUSES:
        raise ConfigError(f"unknown run status {new!r}; one of {', '.join(STATUSES)}")
    if new not in TRANSITIONS.get(old, frozenset()):
        allowed = ", ".join(sorted(TRANSITIONS.get(old, ()))) or "nothing (it is final)"
        raise ConfigError(f"run {run_id} is {old}; it can become {allowed}, not {new}")


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """One run as the store holds it (without its tree, events and memo)."""

    id: str
    name: str
    app: str
    strategy: str
    status: RunStatus
    spec: dict[str, Any]
    fingerprint: dict[str, Any]
    created_at: float
    updated_at: float
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    expansions: int = 0
    nodes: int = 0
    checkpoints: int = 0
    sessions: int = 0
    termination: str | None = None
    result: dict[str, Any] | None = None
    error: str | None = None
    question: str | None = None
    paused_node: str | None = None
    owner: str | None = None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(kw_only=True)
class CheckpointRows:
    """One incremental save: the frontier, changed nodes, new contexts and closed entries.

    `nodes` are (creation order, id, node data); `contexts` are (digest, context data)
    and are content-addressed, so a context shared by many nodes is written once.
    """

    frontier: dict[str, Any]
    nodes: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)
    contexts: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    closed: list[tuple[str, str]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    expansions: int = 0
    node_count: int = 0


@dataclass(kw_only=True)
class SavedTree:
    """What `load_checkpoint` returns: the latest frontier and every saved node."""

    frontier: dict[str, Any]
    nodes: list[dict[str, Any]]
    contexts: dict[str, dict[str, Any]]
    closed: dict[str, str]


class RunStore(Protocol):
    """A durable home for runs (SQLite or Postgres); every write is transactional."""

    url: str

    def create_run(
        self,
        *,
        app: str,
        strategy: str,
        spec: dict[str, Any],
        fingerprint: dict[str, Any],
        name: str = "",
    ) -> RunRecord: ...

    def get_run(self, run_id: str) -> RunRecord: ...

    def list_runs(
        self, *, status: str | None = None, limit: int | None = None
    ) -> list[RunRecord]: ...

    def transition(
        self,
        run_id: str,
        status: RunStatus,
        *,
        owner: str | None = None,
        termination: str | None = None,
        result: dict[str, Any] | None = None,
        error: str | None = None,
        question: str | None = None,
        paused_node: str | None = None,
        new_session: bool = False,
    ) -> RunRecord: ...

    def append_events(self, run_id: str, events: list[dict[str, Any]]) -> None: ...

    def events(self, run_id: str) -> list[dict[str, Any]]: ...

    def save_checkpoint(
        self, run_id: str, rows: CheckpointRows, events: list[dict[str, Any]]
    ) -> None: ...

    def load_checkpoint(self, run_id: str) -> SavedTree | None: ...

    def recall(self, run_id: str, digest: str) -> dict[str, Any] | None: ...

    def remember(
        self, run_id: str, digest: str, request: dict[str, Any], completion: dict[str, Any]
    ) -> None: ...

    def calls(self, run_id: str) -> list[dict[str, Any]]: ...

    def schema_version(self) -> int: ...

    def close(self) -> None: ...
