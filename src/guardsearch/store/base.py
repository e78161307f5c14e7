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
from guardsearch.store.faults import FaultPolicy

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


class NotOwner(ConfigError):
    """This process no longer owns the run (another took it over, or it was cancelled)."""


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
    lease_until: float | None = None
    cancel_requested: bool = False

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(kw_only=True)
class CheckpointRows:
    """One incremental save: the frontier, changed nodes, new contexts and closed entries.

    `nodes` are (creation order, id, node data); `contexts` are (digest, context data)
    and are content-addressed, so a context shared by many nodes is written once.
    Strategy tables (big collections such as A*'s open set) are rows too:
    `table_resets` names tables whose saved rows are dropped first, `table_rows` are
    (table, key, position, value) rows to write, `table_deletes` (table, key) rows to
    delete.
    """

    frontier: dict[str, Any]
    nodes: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)
    contexts: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    closed: list[tuple[str, str]] = field(default_factory=list)
    table_resets: list[str] = field(default_factory=list)
    table_rows: list[tuple[str, str, int, Any]] = field(default_factory=list)
    table_deletes: list[tuple[str, str]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    expansions: int = 0
    node_count: int = 0


@dataclass(kw_only=True)
class SavedTree:
    """What `load_checkpoint` returns: the latest frontier and every saved node.

    `tables` holds each strategy table's rows as (key, position, value), in order.
    """

    frontier: dict[str, Any]
    nodes: list[dict[str, Any]]
    contexts: dict[str, dict[str, Any]]
    closed: dict[str, str]
    tables: dict[str, list[tuple[str, int, Any]]] = field(default_factory=dict)


class RunStore(Protocol):
    """A durable home for runs (SQLite or Postgres); every write is transactional.

    Every operation waits out transient faults under `faults` (store/faults.py) and
    fails as a StoreError; `url` names the store without any password.
    """

    url: str
    faults: FaultPolicy

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
        expect_owner: str | None = None,
        events: list[dict[str, Any]] | None = None,
    ) -> RunRecord:
        """Move the run to `status` (and append `events`) in one transaction.

        With `expect_owner`, only if the run is still `running` and owned by it
        (compare-and-set), else `NotOwner`.
        """
        ...

    def claim(
        self,
        run_id: str,
        owner: str,
        *,
        lease: float,
        expected: RunStatus | None = None,
        sessions: int | None = None,
    ) -> RunRecord:
        """Make the run `running` under `owner` with a lease of `lease` seconds, atomically.

        Refused (ConfigError) when the run is running under another owner that is alive:
        a process on this host that still runs, or, on another host, one whose lease
        has not expired. With `expected` and `sessions` (what the caller read before
        loading the run's state), also refused when the status or the session count
        changed since: another process ran it meanwhile, so that state is stale.
        """
        ...

    def cancel(self, run_id: str) -> RunRecord:
        """Cancel a run. A run that is not running becomes `cancelled` at once; a running
        one whose owner is alive gets a cancel request, which the live run sees at its
        next checkpoint and ends `cancelled` itself.
        """
        ...

    def append_events(self, run_id: str, events: list[dict[str, Any]]) -> None: ...

    def events(self, run_id: str, *, after: int = -1) -> list[dict[str, Any]]:
        """The run's events in order; `after` skips those up to that seq (a reader that
        follows a live run reads only what is new)."""
        ...

    def save_checkpoint(
        self,
        run_id: str,
        rows: CheckpointRows,
        events: list[dict[str, Any]],
        *,
        owner: str | None = None,
        lease: float | None = None,
    ) -> bool:
        """Save one checkpoint in one transaction; True when a cancel was requested.

        With `owner`, refused (`NotOwner`, nothing written) unless the run is still
        running and owned by it; `lease` renews the owner's lease for that many seconds.
        """
        ...

    def load_checkpoint(self, run_id: str) -> SavedTree | None: ...

    def recall(self, run_id: str, digest: str) -> dict[str, Any] | None: ...

    def remember(
        self, run_id: str, digest: str, request: dict[str, Any], completion: dict[str, Any]
    ) -> None: ...

    def calls(self, run_id: str) -> list[dict[str, Any]]: ...

    def schema_version(self) -> int: ...

    def close(self) -> None: ...
