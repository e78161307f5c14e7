"""Durable runs: start a search as a run, resume it after a crash or a pause.

    run = create_run(RunSpec(app="game24", problem={"numbers": "4 5 6 10"},
                             strategy="astar", model="embedded", budget={"calls": 40}), store)
    record = await execute_run(run.id, store)          # or resume_run(...) later

`execute_run` rebuilds the space from the spec (so any process can continue), loads
the last saved frontier, wraps the model in a cache of the run's calls in the store
(`RunStoreCache`: a resumed run replays what was already paid for), saves the
frontier, the changed nodes and the events in one transaction after every expansion,
and ends in a lifecycle status: `succeeded`, `failed` (with the termination or
error), `paused` (a guard or step asked a person) or `cancelled`.

Ownership: a session claims the run (status `running`, itself as owner, a lease)
in one compare-and-set transaction, so of two resumes at once only one runs. Every
checkpoint renews the lease and is refused once the session no longer owns the run;
a run held by a live process is never taken over (on another host: not before its
lease expired). `runs cancel` of a running run leaves a request that the live run
sees at its next checkpoint; it then stops and ends `cancelled` itself.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from guardsearch.core.errors import ConfigError, GuardsearchError, StoreError
from guardsearch.core.events import Event, Trace
from guardsearch.core.outcome import stop_reason_for
from guardsearch.models.base import Model, aclose_model
from guardsearch.models.cache import CachedModel
from guardsearch.models.spec import model_from_spec
from guardsearch.otel import continue_spans
from guardsearch.otel import enabled as tracing_enabled
from guardsearch.registry import AppSetup, build_app
from guardsearch.runs.cache import RunStoreCache
from guardsearch.runs.checkpoint import Checkpointer, load_state
from guardsearch.runs.lock import check_lock, fingerprint
from guardsearch.runs.pause import AskingSpace, InputNeeded
from guardsearch.runs.spec import RunSpec
from guardsearch.search.options import check_json_options
from guardsearch.search.result import result_of
from guardsearch.search.run import search
from guardsearch.search.space import SearchSpace
from guardsearch.search.state import SearchState
from guardsearch.store.base import NotOwner, RunRecord, RunStatus, RunStore
from guardsearch.store.sql import may_take_over, new_owner, release_owner

# Terminations after which the saved state is final (resuming would redo the end).
FINAL = ("success", "all_pruned", "backtrack_ceiling", "budget_exhausted")

LEASE_ENV = "GUARDSEARCH_LEASE_SECONDS"
DEFAULT_LEASE = 600.0


def lease_seconds() -> float:
    """How long a run's owner holds it without a checkpoint (`$GUARDSEARCH_LEASE_SECONDS`).

    Another host may take a run over only when its lease has expired, so the lease
    must outlast the slowest expansion (every checkpoint renews it).
    """
    raw = os.environ.get(LEASE_ENV)
    if not raw:
        return DEFAULT_LEASE
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{LEASE_ENV} must be a number of seconds, got {raw!r}") from None
    if value <= 0:
        raise ConfigError(f"{LEASE_ENV} must be > 0, got {raw!r}")
    return value


def create_run(spec: RunSpec, store: RunStore, *, locked: Path | None = None) -> RunRecord:
    """Record a new run (status `created`) after checking its app and, if asked, the lock."""
    check_json_options(spec.strategy, spec.options)  # a spec's options are JSON
    setup = build_app(spec.app, spec.problem, spec.strategy)  # fail now on a bad problem
    if locked is not None:
        check_lock(spec, locked, setup)
    return store.create_run(
        app=spec.app,
        strategy=spec.strategy,
        spec=spec.to_dict(),
        fingerprint=fingerprint(spec, setup),
        name=spec.name,
    )


class EventBuffer:
    """Collects a run's events between saves; each save writes them in its transaction."""

    def __init__(self) -> None:
        self.pending: list[dict[str, Any]] = []

    def __call__(self, event: Event) -> None:
        self.pending.append(event.as_dict())

    def take(self) -> list[dict[str, Any]]:
        out, self.pending = self.pending, []
        return out


@dataclass
class StopRequest:
    """Set when a checkpoint finds a cancel request; the search polls it (`should_stop`)."""

    requested: bool = False

    def __call__(self) -> bool:
        return self.requested


def _check_resumable(record: RunRecord, human_input: str | None) -> None:
    """Refuse early, before anything is written (the claim checks again, atomically)."""
    if record.status == "succeeded":
        raise ConfigError(f"run {record.id} already succeeded; nothing to resume")
    if record.status == "running" and not may_take_over(
        record.owner, record.lease_until, time.time()
    ):
        raise ConfigError(f"run {record.id} is running in process {record.owner}")
    if record.status == "paused" and human_input is None:
        raise ConfigError(
            f"run {record.id} is paused waiting for input: {record.question}\n"
            f"resume it with: guardsearch runs resume {record.id} --input TEXT"
        )
    if human_input is not None and record.status != "paused":
        raise ConfigError(
            f"run {record.id} is {record.status}, not paused; --input answers a paused "
            "run's question"
        )


def _check_answerable(record: RunRecord, state: SearchState | None) -> None:
    if state is None or record.paused_node is None or record.paused_node not in state.tree.nodes:
        raise ConfigError(f"run {record.id} has no saved node waiting for input")


@dataclass
class _Session:
    """One process's turn at a run: it owns the run under `owner` and saves every
    expansion (frontier, changed nodes, events) in one transaction."""

    run_id: str
    store: RunStore
    lease: float
    buffer: EventBuffer
    checkpointer: Checkpointer
    owner: str
    stop: StopRequest = field(default_factory=StopRequest)
    live: list[SearchState] = field(default_factory=list)
    memo: list[RunStoreCache] = field(default_factory=list)

    def save(self, current: SearchState) -> None:
        self.live[:] = [current]
        for cache in self.memo:
            cache.flush()  # answers the store could not take go in before the checkpoint
        rows = self.checkpointer.rows(current)
        if self.store.save_checkpoint(
            self.run_id, rows, self.buffer.take(), owner=self.owner, lease=self.lease
        ):
            self.stop.requested = True
        self.checkpointer.written(rows)

    def end(self, status: RunStatus, **fields: Any) -> RunRecord:
        return self.store.transition(
            self.run_id, status, expect_owner=self.owner, events=self.buffer.take(), **fields
        )


async def execute_run(
    run_id: str,
    store: RunStore,
    *,
    human_input: str | None = None,
    budget: dict[str, Any] | None = None,
    locked: Path | None = None,
    model: Model | None = None,
    trace: Trace | None = None,
    lease: float | None = None,
) -> RunRecord:
    """Run (or continue) `run_id` until it ends or pauses; returns the final record.

    `human_input` answers a paused run's question; `budget` raises limits (e.g.
    `{"calls": 80}`) for a run that ran out; `locked` checks a lock file first;
    `model` replaces the spec's model in this process (tests, custom backends);
    `lease` is the ownership lease in seconds (default `lease_seconds()`).
    """
    record = store.get_run(run_id)
    _check_resumable(record, human_input)
    spec = RunSpec.from_dict(record.spec)
    if budget:
        spec = spec.with_budget(**budget)
    setup = build_app(spec.app, spec.problem, spec.strategy)
    if locked is not None:
        check_lock(spec, locked, setup)
    saved = store.load_checkpoint(run_id)
    state = load_state(saved)
    if human_input is not None:
        _check_answerable(record, state)  # before the run changes status
    inner = model if model is not None else model_from_spec(spec.model)
    lease = lease_seconds() if lease is None else lease
    trace = trace if trace is not None else Trace()
    checkpointer = Checkpointer()
    if saved is not None and state is not None:
        checkpointer.adopt(saved, state)  # its contexts are saved: new ones build on them
    live = [] if state is None else [state]
    session = _Session(run_id, store, lease, EventBuffer(), checkpointer, new_owner(), live=live)
    trace.subscribe(session.buffer)
    try:
        # Refused if another process ran it since `record` was read: `state` is stale.
        store.claim(
            run_id,
            session.owner,
            lease=session.lease,
            expected=record.status,
            sessions=record.sessions,
        )
        if human_input is not None:
            state = _answer(record, state, human_input, trace)
            session.save(state)
            state.mark_saved()
        if (
            state is not None
            and state.termination in FINAL
            and not (budget and state.termination == "budget_exhausted")
        ):
            # Killed after the last save but before the status changed: the end is saved.
            return _finish(session.end, state, setup.space)
        if saved is not None and tracing_enabled():
            # A resumed run's spans link to those of its earlier sessions.
            continue_spans(trace, store.events(run_id))
        return await _search_run(session, spec, setup, inner, trace, state)
    finally:
        release_owner(session.owner)
        if model is None:  # built here from the spec: close its connections
            await aclose_model(inner)


async def _search_run(
    session: _Session,
    spec: RunSpec,
    setup: AppSetup,
    inner: Model,
    trace: Trace,
    state: SearchState | None,
) -> RunRecord:
    """The search itself, from `state` (or the start), through the run's cache of paid
    calls; every way it ends becomes the run's status."""
    session.memo.append(RunStoreCache(session.store, session.run_id))
    cached = CachedModel(inner, session.memo[0])
    options = {**setup.options, **spec.options}
    asked = options.pop("should_stop", None)
    options["should_stop"] = lambda: session.stop() or (asked is not None and bool(asked()))
    try:
        result = await search(
            cast(SearchSpace, AskingSpace(setup.space)),
            spec.strategy,
            model=cached,
            budget=spec.make_budget(),
            trace=trace,
            on_expansion=session.save,
            resume=state,
            run_id=session.run_id,
            **options,
        )
    except InputNeeded as exc:
        # A guard names the node whose expansion asked; a step or proposer that
        # asks is inside the expansion the state records.
        node = exc.node or (session.live[0].expanding if session.live else None)
        return session.end("paused", question=exc.question, paused_node=node)
    except (asyncio.CancelledError, KeyboardInterrupt):
        session.end("cancelled", termination="cancelled")
        raise
    except NotOwner:
        raise  # another session owns the run now: write nothing more
    except StoreError as exc:
        return _stopped_by_store(exc, session.end, session.memo[0], session.store)
    except GuardsearchError as exc:
        # The stop reason (model_error for a server that went away) says what to do:
        # a model error resumes once the server is back, replaying every paid call.
        failed = session.end("failed", termination=stop_reason_for(exc), error=str(exc))
        if isinstance(exc, ConfigError):
            raise
        return failed
    return _finish(session.end, result.state, setup.space)


def _answer(record: RunRecord, state: SearchState | None, text: str, trace: Trace) -> SearchState:
    _check_answerable(record, state)
    assert state is not None and record.paused_node is not None
    node = state.tree[record.paused_node]
    node.context = node.context.amend(human_input=(record.question or "input", text))
    state.touch(node)
    trace.emit("note", node=node.id, message="input from a person", question=record.question)
    return state


def _stopped_by_store(
    exc: StoreError, end: Callable[..., RunRecord], memo: RunStoreCache, store: RunStore
) -> RunRecord:
    """The store failed mid-run (after waiting): wait once more for it, then record the
    answers it has not taken and the stop (`store_error`); if it is still out, raise,
    saying where those answers are kept. Either way the run resumes from its last
    checkpoint and replays every answer it paid for."""
    store.faults.renew()
    try:
        memo.flush()
        return end("failed", termination="store_error", error=str(exc))
    except StoreError as again:
        raise StoreError(
            exc.store,
            f"{exc.detail}; the run stopped: resume it when the store is back ({memo.kept_note()})",
            transient=exc.transient,
        ) from again


def _finish(end: Callable[..., RunRecord], state: SearchState, space: SearchSpace) -> RunRecord:
    result = result_of(state, space).summary()
    status: RunStatus = "succeeded" if result["succeeded"] else "failed"
    if state.termination == "cancelled":
        status = "cancelled"  # a cancel request seen at a checkpoint
    return end(status, termination=state.termination, result=result)


async def start_run(
    spec: RunSpec,
    store: RunStore,
    *,
    locked: Path | None = None,
    model: Model | None = None,
    trace: Trace | None = None,
) -> RunRecord:
    """Create a run and execute it; the record carries the id to resume it by."""
    record = create_run(spec, store, locked=locked)
    return await execute_run(record.id, store, model=model, trace=trace)


resume_run = execute_run
