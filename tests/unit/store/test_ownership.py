"""Who runs a run: one owner at a time (compare-and-set + lease), and cancelling a live run.

Every test runs on SQLite and on PostgreSQL; `reopen` gives a second connection to
the same store, as a second process would have.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from durable_apps import answer_for

from guardsearch import ConfigError, ModelRequest, ScriptedModel
from guardsearch.runs import RunSpec, create_run, execute_run
from guardsearch.runs.checkpoint import Checkpointer
from guardsearch.search import search
from guardsearch.store.base import NotOwner, RunRecord, RunStore
from guardsearch.store.sql import owner_id

SPEC = RunSpec(app="durable_apps:search_app", strategy="bfs", model="scripted")
ELSEWHERE_A = "build-host-a:4242:0a0a0a0a"  # owners on another host: only leases tell
ELSEWHERE_B = "build-host-b:4343:0b0b0b0b"


class Gated:
    """A scripted model that holds every call until `gate` opens; counts paid requests."""

    def __init__(self, gate: threading.Event, bill: Counter[str], lock: threading.Lock) -> None:
        self.inner = ScriptedModel(answer_for("bfs"))
        self.name = "scripted"
        self.gate, self.bill, self.lock = gate, bill, lock

    async def complete(self, request: ModelRequest) -> Any:
        while not self.gate.is_set():
            await asyncio.sleep(0.005)
        with self.lock:
            self.bill[request.digest()] += 1
        return await self.inner.complete(request)


def test_of_two_resumes_at_once_only_one_runs_and_pays(
    store: RunStore, reopen: Callable[[RunStore], RunStore]
) -> None:
    whole = asyncio.run(
        execute_run(create_run(SPEC, store).id, store, model=ScriptedModel(answer_for("bfs")))
    )
    run = create_run(SPEC, store).id
    gate, lock = threading.Event(), threading.Lock()
    bill: Counter[str] = Counter()
    outcomes: dict[int, RunRecord | Exception] = {}
    start = threading.Barrier(2)

    def resume(i: int) -> None:
        mine = reopen(store)  # each "process" has its own connection
        try:
            start.wait()
            outcomes[i] = asyncio.run(execute_run(run, mine, model=Gated(gate, bill, lock)))
        except Exception as exc:
            outcomes[i] = exc
        finally:
            mine.close()

    threads = [threading.Thread(target=resume, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 10
    while not outcomes and time.monotonic() < deadline:
        time.sleep(0.01)  # the loser is refused while the winner waits at the gate
    gate.set()
    for t in threads:
        t.join(30)
    errors = [o for o in outcomes.values() if isinstance(o, Exception)]
    records = [o for o in outcomes.values() if isinstance(o, RunRecord)]
    assert len(records) == 1 and len(errors) == 1, outcomes
    assert isinstance(errors[0], ConfigError) and "is running in process" in str(errors[0])
    done = store.get_run(run)
    assert (done.status, done.result, done.sessions) == ("succeeded", whole.result, 1)
    assert done.calls == whole.calls == sum(bill.values())
    assert set(bill.values()) == {1}  # nothing paid twice


def test_another_host_takes_a_run_over_only_after_its_lease_expired(store: RunStore) -> None:
    run = create_run(SPEC, store).id
    held = store.claim(run, ELSEWHERE_A, lease=60)
    assert held.status == "running" and held.owner == ELSEWHERE_A
    assert held.lease_until is not None and held.lease_until > time.time() + 50
    with pytest.raises(ConfigError, match=f"is running in process {ELSEWHERE_A}"):
        store.claim(run, ELSEWHERE_B, lease=60)
    with pytest.raises(ConfigError, match="is running in process"):
        asyncio.run(execute_run(run, store, model=ScriptedModel(answer_for("bfs"))))
    store.claim(run, ELSEWHERE_A, lease=-1)  # its owner renews it, but the lease runs out
    taken = store.claim(run, ELSEWHERE_B, lease=60)
    assert (taken.owner, taken.sessions) == (ELSEWHERE_B, 3)


def test_a_claim_is_refused_when_another_process_ran_the_run_since_it_was_read(
    store: RunStore,
) -> None:
    run = create_run(SPEC, store).id
    store.claim(run, ELSEWHERE_A, lease=60)
    store.transition(run, "failed", expect_owner=ELSEWHERE_A, error="connection reset")
    seen = store.get_run(run)  # what a resume reads before it loads the saved state
    store.claim(run, ELSEWHERE_B, lease=60)  # meanwhile another resume runs...
    store.transition(run, "failed", expect_owner=ELSEWHERE_B, error="connection reset")
    assert store.get_run(run).status == seen.status  # ...and fails again: same status
    with pytest.raises(ConfigError, match="changed by another process meanwhile"):
        store.claim(run, ELSEWHERE_A, lease=60, expected=seen.status, sessions=seen.sessions)
    again = store.get_run(run)
    assert store.claim(run, ELSEWHERE_A, lease=60, expected="failed", sessions=again.sessions)


def test_the_old_owner_can_neither_checkpoint_nor_end_a_run_taken_over(
    store: RunStore,
) -> None:
    run = create_run(SPEC, store).id
    store.claim(run, ELSEWHERE_A, lease=-1)
    store.claim(run, ELSEWHERE_B, lease=60)  # A's lease expired: B took over
    states: list[Any] = []
    asyncio.run(
        search(
            *_space(),
            "bfs",
            model=ScriptedModel(answer_for("bfs")),
            on_expansion=lambda s: states.append(s),
        )
    )
    rows = Checkpointer().rows(states[-1])
    with pytest.raises(NotOwner, match=f"no longer run by {ELSEWHERE_A}"):
        store.save_checkpoint(run, rows, [_event()], owner=ELSEWHERE_A, lease=60)
    assert store.load_checkpoint(run) is None and store.events(run) == []  # nothing written
    with pytest.raises(NotOwner):
        store.transition(run, "succeeded", expect_owner=ELSEWHERE_A, events=[_event()])
    assert store.get_run(run).status == "running" and store.events(run) == []
    before = store.get_run(run).lease_until
    assert store.save_checkpoint(run, rows, [_event()], owner=ELSEWHERE_B, lease=600) is False
    after = store.get_run(run)
    assert after.checkpoints == 1 and after.lease_until is not None
    assert before is not None and after.lease_until > before  # the checkpoint renewed it
    done = store.transition(run, "succeeded", expect_owner=ELSEWHERE_B, events=[_event()])
    assert done.status == "succeeded" and done.owner is None and len(store.events(run)) == 2


class CancelsAt:
    """A scripted model that, at its `at`-th call, runs `runs cancel` from elsewhere."""

    def __init__(self, at: int, cancel: Callable[[], RunRecord]) -> None:
        self.inner = ScriptedModel(answer_for("bfs"))
        self.name = "scripted"
        self.at, self.cancel = at, cancel
        self.paid: Counter[str] = Counter()
        self.seen: RunRecord | None = None

    async def complete(self, request: ModelRequest) -> Any:
        self.paid[request.digest()] += 1
        if sum(self.paid.values()) == self.at:
            self.seen = self.cancel()
        return await self.inner.complete(request)


async def test_cancelling_a_live_run_stops_it_cleanly_at_its_next_checkpoint(
    store: RunStore, reopen: Callable[[RunStore], RunStore]
) -> None:
    whole = await execute_run(
        create_run(SPEC, store).id, store, model=ScriptedModel(answer_for("bfs"))
    )
    run = create_run(SPEC, store).id
    other = reopen(store)
    model = CancelsAt(3, lambda: other.cancel(run))
    stopped = await execute_run(run, store, model=model)
    assert model.seen is not None  # what `runs cancel` saw: still running, asked to stop
    assert (model.seen.status, model.seen.cancel_requested) == ("running", True)
    assert (stopped.status, stopped.termination) == ("cancelled", "cancelled")
    assert stopped.error is None and not stopped.cancel_requested and stopped.owner is None
    assert 3 <= stopped.calls < whole.calls
    # A cancelled run resumes to the same end, paying for nothing twice.
    model.at = 0
    done = await execute_run(run, store, model=model)
    assert (done.status, done.result, done.calls) == ("succeeded", whole.result, whole.calls)
    assert set(model.paid.values()) == {1}
    other.close()


def test_cancelling_a_run_whose_owner_died_cancels_it_at_once(store: RunStore) -> None:
    run = create_run(SPEC, store).id
    store.transition(run, "running", owner=f"{owner_id().rpartition(':')[0]}:999999999")
    cancelled = store.cancel(run)
    assert (cancelled.status, cancelled.termination, cancelled.owner) == (
        "cancelled",
        "cancelled",
        None,
    )
    live = create_run(SPEC, store).id
    store.transition(live, "running", owner=f"{owner_id().rpartition(':')[0]}:{os.getppid()}")
    asked = store.cancel(live)
    assert (asked.status, asked.cancel_requested) == ("running", True)


def _space() -> tuple[Any]:
    from durable_apps import search_app

    return (search_app({}, "bfs").space,)


def _event() -> dict[str, Any]:
    return {"kind": "note", "at": 1.0, "step": "", "node": "", "data": {}}
