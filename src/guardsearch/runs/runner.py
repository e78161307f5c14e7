"""Durable runs: start a search as a run, resume it after a crash or a pause.

    run = create_run(RunSpec(app="game24", problem={"numbers": "4 5 6 10"},
                             strategy="astar", model="embedded", budget={"calls": 40}), store)
    record = await execute_run(run.id, store)          # or resume_run(...) later

`execute_run` rebuilds the space from the spec (so any process can continue), loads
the last saved frontier, wraps the model in a per-run memo (a resumed run replays
what was already paid for), saves the frontier, the changed nodes and the events in
one transaction after every expansion, and ends in a lifecycle status: `succeeded`,
`failed` (with the termination or error), `paused` (a guard asked a person) or
`cancelled`.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from pathlib import Path
from typing import Any, cast

from guardsearch.core.errors import ConfigError, GuardsearchError
from guardsearch.core.events import Event, Trace
from guardsearch.models.base import Model
from guardsearch.models.spec import model_from_spec
from guardsearch.runs.apps import build_app
from guardsearch.runs.checkpoint import Checkpointer, load_state
from guardsearch.runs.lock import check_lock, fingerprint
from guardsearch.runs.memo import MemoModel
from guardsearch.runs.pause import AskingSpace, InputNeeded
from guardsearch.runs.spec import RunSpec
from guardsearch.search.run import search
from guardsearch.search.serialize import context_to_dict
from guardsearch.search.space import SearchSpace
from guardsearch.search.state import SearchState
from guardsearch.store.base import RunRecord, RunStatus, RunStore
from guardsearch.store.sql import dumps, owner_id

# Terminations after which the saved state is final (resuming would redo the end).
FINAL = ("success", "all_pruned", "backtrack_ceiling", "budget_exhausted")


def create_run(spec: RunSpec, store: RunStore, *, locked: Path | None = None) -> RunRecord:
    """Record a new run (status `created`) after checking its app and, if asked, the lock."""
    build_app(spec.app, spec.problem, spec.strategy)  # fail now on a bad problem, not later
    if locked is not None:
        check_lock(spec, locked)
    return store.create_run(
        app=spec.app,
        strategy=spec.strategy,
        spec=spec.to_dict(),
        fingerprint=fingerprint(spec),
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


def _owner_alive(owner: str | None) -> bool:
    if not owner:
        return False
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _check_resumable(record: RunRecord, human_input: str | None) -> None:
    if record.status == "succeeded":
        raise ConfigError(f"run {record.id} already succeeded; nothing to resume")
    if record.status == "running" and _owner_alive(record.owner):
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


def summarize(state: SearchState, space: SearchSpace) -> dict[str, Any]:
    """The run's result from its final state: the winning (or best failed) path."""
    tree = state.tree
    succeeded = state.termination == "success" and state.goal is not None
    if succeeded:
        assert state.goal is not None
        last = tree[state.goal]
    elif state.best is not None:
        last = tree[state.best]
    else:
        last = tree.best()
    answer = space.answer(last) if succeeded else None
    return {
        "succeeded": succeeded,
        "termination": state.termination,
        "answer": json.loads(dumps(answer)) if answer is not None else None,
        "path": [n.text for n in tree.path(last.id)[1:]],
        "calls": state.usage.calls,
        "tokens": state.usage.total_tokens,
        "expansions": state.expansions,
        "nodes": len(tree),
        # Node isolation: only the winning path's context is merged back.
        "context": context_to_dict(last.context),
    }


async def execute_run(
    run_id: str,
    store: RunStore,
    *,
    human_input: str | None = None,
    budget: dict[str, Any] | None = None,
    locked: Path | None = None,
    model: Model | None = None,
    trace: Trace | None = None,
) -> RunRecord:
    """Run (or continue) `run_id` until it ends or pauses; returns the final record.

    `human_input` answers a paused run's question; `budget` raises limits (e.g.
    `{"calls": 80}`) for a run that ran out; `locked` checks a lock file first;
    `model` replaces the spec's model in this process (tests, custom backends).
    """
    record = store.get_run(run_id)
    _check_resumable(record, human_input)
    spec = RunSpec.from_dict(record.spec)
    if budget:
        spec = spec.with_budget(**budget)
    if locked is not None:
        check_lock(spec, locked)
    setup = build_app(spec.app, spec.problem, spec.strategy)
    space = setup.space
    state = load_state(store.load_checkpoint(run_id))
    inner = model if model is not None else model_from_spec(spec.model)

    trace = trace if trace is not None else Trace()
    buffer = EventBuffer()
    trace.subscribe(buffer)
    checkpointer = Checkpointer()

    def save(current: SearchState) -> None:
        rows = checkpointer.rows(current)
        store.save_checkpoint(run_id, rows, buffer.take())
        checkpointer.written(rows)

    store.transition(run_id, "running", owner=owner_id(), new_session=True)
    if human_input is not None:
        state = _answer(record, state, human_input, trace)
        save(state)
        state.changed.clear()
    if (
        state is not None
        and state.termination in FINAL
        and not (budget and state.termination == "budget_exhausted")
    ):
        # Killed after the last save but before the status changed: the end is saved.
        return _finish(store, run_id, state, space, buffer)
    memo = MemoModel(inner, store, run_id)
    try:
        result = await search(
            cast(SearchSpace, AskingSpace(space)),
            spec.strategy,
            model=memo,
            budget=spec.make_budget(),
            trace=trace,
            on_expansion=save,
            resume=state,
            **{**setup.options, **spec.options},
        )
    except InputNeeded as exc:
        store.append_events(run_id, buffer.take())
        return store.transition(run_id, "paused", question=exc.question, paused_node=exc.node)
    except (asyncio.CancelledError, KeyboardInterrupt):
        store.append_events(run_id, buffer.take())
        store.transition(run_id, "cancelled", termination="cancelled")
        raise
    except GuardsearchError as exc:
        store.append_events(run_id, buffer.take())
        failed = store.transition(run_id, "failed", error=str(exc))
        if isinstance(exc, ConfigError):
            raise
        return failed
    return _finish(store, run_id, result.state, space, buffer)


def _answer(record: RunRecord, state: SearchState | None, text: str, trace: Trace) -> SearchState:
    if state is None or record.paused_node is None or record.paused_node not in state.tree.nodes:
        raise ConfigError(f"run {record.id} has no saved node waiting for input")
    node = state.tree[record.paused_node]
    node.context = node.context.amend(human_input=(record.question or "input", text))
    state.touch(node)
    trace.emit("note", node=node.id, message="input from a person", question=record.question)
    return state


def _finish(
    store: RunStore, run_id: str, state: SearchState, space: SearchSpace, buffer: EventBuffer
) -> RunRecord:
    result = summarize(state, space)
    store.append_events(run_id, buffer.take())
    status: RunStatus = "succeeded" if result["succeeded"] else "failed"
    return store.transition(run_id, status, termination=state.termination, result=result)


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
