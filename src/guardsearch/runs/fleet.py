"""The run fleet: durable runs executed as Ray tasks against one shared run store.

    fleet = RayFleet(address="auto")                     # or None: a local Ray
    record = fleet.execute(store_url, run_id)            # one run, on some worker
    records = fleet.execute_all(store_url, run_ids)      # many, as the cluster allows

The run store stays the source of truth and Ray is only the scheduler. A Ray task
reads the run, checks that it is still what the submitter saw (status and session
count), and calls `execute_run` there, so leases, compare-and-set checkpoints and
the memo work exactly as on one machine. What a fleet adds:

- **Takeover.** Each run's task has `max_retries`: when the worker process dies
  (SIGKILL, out of memory) or its node is lost, Ray runs the task again elsewhere.
  The retry finds the run `running` under the dead owner and takes it over from its
  last checkpoint; a dead owner on this host is seen at once (its pid), one on a
  lost host once its lease has expired (the retry waits for that). The memo replays
  every answer the dead worker paid for. A retry that finds its run already ended
  (the worker died after the end was written) returns it as it is.
- **Backpressure.** Runs are queued per model endpoint in a named Ray actor
  (`EndpointSlots`): at most `per_endpoint` runs against one endpoint hold a slot,
  first come first served (`execute_all` lines its runs up in the order given), and a
  run's task is only submitted once it holds one, so a queued run waits in the store
  as `created` without taking a worker.
- **Cancel and pause** need nothing new: `runs cancel` of a queued run cancels it
  (its task then finds it changed and does nothing); of a running run, it leaves a
  request the worker sees at its next checkpoint. A run that pauses ends its task;
  `runs resume RUN --input TEXT --executor ray` continues it on the fleet.

Ray is imported only here, and only when a fleet is used (`guardsearch[ray]`).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from guardsearch.core.errors import ConfigError, GuardsearchError, RunError
from guardsearch.models.base import Model
from guardsearch.runs.runner import execute_run
from guardsearch.runs.spec import RunSpec
from guardsearch.store.base import RunRecord, RunStatus
from guardsearch.store.open import open_store
from guardsearch.store.sql import may_take_over

NAMESPACE = "guardsearch"
SLOTS_ACTOR = "guardsearch-endpoint-slots"
PER_ENDPOINT_ENV = "GUARDSEARCH_FLEET_PER_ENDPOINT"
DEFAULT_PER_ENDPOINT = 4
DEFAULT_RETRIES = 3
# How often a task waiting for another process's run looks at the store again.
POLL_SECONDS = 1.0
# An endpoint slot's lease: its submitter renews it every third of this.
SLOT_TTL = 30.0


@dataclass(frozen=True)
class SessionAsk:
    """What one `execute` call asks of a run's session: the answer to its pause, raised
    budget limits, and a model object to use instead of the spec's (local only)."""

    human_input: str | None = None
    budget: dict[str, Any] | None = None
    model: Model | None = None


class RunExecutor:
    """Where a durable run executes: here (`local`) or on a Ray fleet (`ray`).

    `execute` blocks until the run ends or pauses and returns its record; `serve`
    calls it from a thread of its own for every run it starts or resumes. An executor
    says how in `session`.
    """

    name: str = ""

    def execute(
        self,
        store_url: str,
        run_id: str,
        *,
        human_input: str | None = None,
        budget: dict[str, Any] | None = None,
        model: Model | None = None,
    ) -> RunRecord:
        ask = SessionAsk(human_input=human_input, budget=budget, model=model)
        return asyncio.run(self.session(store_url, run_id, ask))

    async def session(self, store_url: str, run_id: str, ask: SessionAsk) -> RunRecord:
        raise NotImplementedError


class LocalRunExecutor(RunExecutor):
    """The run executes in this process (the default)."""

    name = "local"

    async def session(self, store_url: str, run_id: str, ask: SessionAsk) -> RunRecord:
        store = open_store(store_url)
        try:
            return await execute_run(
                run_id, store, human_input=ask.human_input, budget=ask.budget, model=ask.model
            )
        finally:
            store.close()


def per_endpoint_limit() -> int:
    """Runs allowed at once against one model endpoint (`$GUARDSEARCH_FLEET_PER_ENDPOINT`)."""
    raw = os.environ.get(PER_ENDPOINT_ENV)
    if not raw:
        return DEFAULT_PER_ENDPOINT
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"{PER_ENDPOINT_ENV} must be a whole number >= 1, got {raw!r}")
    return int(raw)


def endpoint_of(model_spec: str) -> str:
    """The endpoint a run's model calls go to, the key runs are queued by.

    A server (`openai:URL#name`) is its scheme, host and port: every model a server
    serves shares its slots. A local model (embedded, gguf, scripted, replay) runs in
    each worker, so its key is the spec's kind: the bound then caps how many workers
    load it at once.
    """
    kind, _, rest = model_spec.strip().partition(":")
    if kind == "openai":
        url = rest.partition("#")[0] or "https://api.openai.com/v1"
        parts = urlsplit(url)
        return f"openai:{parts.scheme}://{parts.netloc}"
    return kind.partition("?")[0] or model_spec


# -- the worker's side -------------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    """What the submitter saw of a run: its task executes it only if it still is so."""

    status: RunStatus
    sessions: int


async def run_as_seen(
    store_url: str,
    run_id: str,
    seen: Seen,
    *,
    human_input: str | None = None,
    budget: dict[str, Any] | None = None,
) -> RunRecord:
    """Execute `run_id` if it is as `seen`, take it over if its owner died, else
    return it as the store has it (someone else ended, cancelled or resumed it).

    A run that another live process holds is waited for (a process on this host until
    it ends, one on another host until it ends or its lease runs out).
    """
    store = open_store(store_url)
    try:
        while True:
            record = store.get_run(run_id)
            if (record.status, record.sessions) == (seen.status, seen.sessions):
                return await execute_run(run_id, store, human_input=human_input, budget=budget)
            if record.status != "running":
                return record  # ended (this task's earlier attempt, or anyone's): as it is
            if may_take_over(record.owner, record.lease_until, time.time()):
                # This task's earlier attempt died (its worker or node): take over.
                # An answer to a pause was saved by that attempt before it ran on.
                return await execute_run(run_id, store, budget=budget)
            await asyncio.sleep(POLL_SECONDS)
    finally:
        store.close()


# A guardsearch error raised in a worker comes back as (usage error?, message).
Refusal = tuple[bool, str]


def run_task(
    store_url: str,
    run_id: str,
    seen: Seen,
    human_input: str | None,
    budget: dict[str, Any] | None,
) -> RunRecord | Refusal:
    """The Ray task: one run in this worker process. A guardsearch error comes back
    as a value (the run's own failure, not the worker's), so Ray never retries it."""
    try:
        return asyncio.run(
            run_as_seen(store_url, run_id, seen, human_input=human_input, budget=budget)
        )
    except GuardsearchError as exc:
        return isinstance(exc, ConfigError), str(exc)


class EndpointSlots:
    """A Ray actor: per endpoint, at most `limit` runs hold a slot; the rest wait in
    order of arrival. Slots are held by run id, so asking again for a run that holds
    one (a retried task) returns at once, and releasing twice is harmless.

    A slot is a lease of `ttl` seconds that its submitter renews while the run goes
    on: the slots of a submitter that died (and so never releases) free themselves.
    """

    def __init__(self) -> None:
        self.held: dict[str, dict[str, float]] = {}  # endpoint -> run id -> expiry
        self.waiting: dict[str, list[tuple[str, asyncio.Future[None]]]] = {}

    async def enqueue(
        self, endpoint: str, run_ids: Sequence[str], limit: int, ttl: float = SLOT_TTL
    ) -> None:
        """Line `run_ids` up for `endpoint` in the order given, in one call.

        Ray runs an async actor's calls in no set order, even calls from one caller, so
        concurrent `acquire`s of a batch would take their places at random. A submitter
        lines its batch up here first; each run's `acquire` then waits for its place."""
        for run_id in run_ids:
            self._line_up(endpoint, run_id, limit, ttl)

    async def acquire(self, endpoint: str, run_id: str, limit: int, ttl: float = SLOT_TTL) -> int:
        """Wait for a slot (keeping the place `enqueue` gave the run, if it has one);
        returns how many runs hold one on `endpoint` now."""
        future = self._line_up(endpoint, run_id, limit, ttl)
        while future is not None and not future.done():
            await asyncio.wait({future}, timeout=ttl)
            self._expire(endpoint, limit, ttl)
        return len(self.held[endpoint])

    def _line_up(
        self, endpoint: str, run_id: str, limit: int, ttl: float
    ) -> asyncio.Future[None] | None:
        """Give `run_id` a slot now (None) or its place in line (the future that a free
        slot completes). A run that holds a slot or is in line already keeps it."""
        held = self.held.setdefault(endpoint, {})
        queue = self.waiting.setdefault(endpoint, [])
        self._expire(endpoint, limit, ttl)
        if run_id in held or (len(held) < limit and not queue):
            held[run_id] = time.monotonic() + ttl
            return None
        for waiter, future in queue:
            if waiter == run_id:
                return future
        future = asyncio.get_running_loop().create_future()
        queue.append((run_id, future))
        return future

    def renew(self, endpoint: str, run_id: str, ttl: float = SLOT_TTL) -> None:
        held = self.held.setdefault(endpoint, {})
        if run_id in held:
            held[run_id] = time.monotonic() + ttl

    def release(self, endpoint: str, run_id: str, limit: int, ttl: float = SLOT_TTL) -> None:
        """The run neither holds nor waits for a slot any more (a run lined up by
        `enqueue` whose submission failed before it asked leaves the line)."""
        self.held.setdefault(endpoint, {}).pop(run_id, None)
        queue = self.waiting.setdefault(endpoint, [])
        for waiter, future in [w for w in queue if w[0] == run_id]:
            queue.remove((waiter, future))
            future.cancel()
        self._expire(endpoint, limit, ttl)

    def _expire(self, endpoint: str, limit: int, ttl: float) -> None:
        """Drop the slots whose lease ran out, then give free slots to the waiters."""
        now = time.monotonic()
        held = self.held.setdefault(endpoint, {})
        for run_id in [r for r, until in held.items() if until < now]:
            del held[run_id]
        queue = self.waiting.setdefault(endpoint, [])
        while queue and len(held) < limit:
            waiter, future = queue.pop(0)
            if not future.done():  # a waiter whose call was cancelled is skipped
                held[waiter] = now + ttl
                future.set_result(None)

    def state(self) -> dict[str, dict[str, Any]]:
        """Per endpoint: the runs holding a slot and the runs waiting, in order."""
        return {
            key: {
                "held": sorted(self.held.get(key, {})),
                "waiting": [r for r, _ in self.waiting.get(key, [])],
            }
            for key in sorted(set(self.held) | set(self.waiting))
        }


# -- the submitter's side ----------------------------------------------------------------


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError("the ray executor needs Ray: pip install 'guardsearch[ray]'") from exc
    return ray


def _read(store_url: str, run_ids: Sequence[str]) -> list[RunRecord]:
    store = open_store(store_url)
    try:
        return [store.get_run(r) for r in run_ids]
    finally:
        store.close()


async def _renew(slots: Any, endpoint: str, run_id: str) -> None:
    """Keep a run's endpoint slot while its task runs."""
    while True:
        await asyncio.sleep(SLOT_TTL / 3)
        slots.renew.remote(endpoint, run_id)


@dataclass
class RayFleet(RunExecutor):
    """Durable runs as Ray tasks: `address=None` starts (or joins) a local Ray,
    `"auto"` or `"ray://host:10001"` joins a cluster.

    `per_endpoint` bounds the runs at once per model endpoint (default
    `$GUARDSEARCH_FLEET_PER_ENDPOINT`, else 4); `max_retries` is how often Ray runs a
    task again after its worker died; `cpus` is what one run reserves on a worker.
    """

    address: str | None = None
    per_endpoint: int | None = None
    max_retries: int = DEFAULT_RETRIES
    cpus: float = 1.0
    init_options: dict[str, Any] = field(default_factory=dict)
    name: str = field(default="ray", init=False)

    def __post_init__(self) -> None:
        if self.per_endpoint is not None and self.per_endpoint < 1:
            raise ConfigError(f"per_endpoint must be >= 1, got {self.per_endpoint}")
        self.limit = self.per_endpoint or per_endpoint_limit()
        self._made: tuple[Any, Any] | None = None

    def connect(self) -> Any:
        """Ray, initialised (joining `address` if given)."""
        ray = _import_ray()
        if not ray.is_initialized():
            options: dict[str, Any] = {"include_dashboard": False, **self.init_options}
            if self.address is not None:
                options["address"] = self.address
            try:
                ray.init(**options)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                where = self.address or "a local Ray"
                raise ConfigError(f"cannot start or join {where}: {exc}") from exc
        return ray

    def slots(self) -> Any:
        """The cluster's one `EndpointSlots` actor (created by the first fleet that asks;
        detached, so it outlives the process that created it)."""
        ray = self.connect()
        actor = ray.remote(num_cpus=0, max_restarts=-1)(EndpointSlots)
        return actor.options(
            name=SLOTS_ACTOR, namespace=NAMESPACE, lifetime="detached", get_if_exists=True
        ).remote()

    def _remote(self) -> tuple[Any, Any]:
        """The slots actor and the run task, made once per fleet (Ray warns when a
        function is exported again and again)."""
        if self._made is None:
            task = self.connect().remote(run_task)
            self._made = (
                self.slots(),
                task.options(num_cpus=self.cpus, max_retries=self.max_retries),
            )
        return self._made

    async def run(
        self,
        store_url: str,
        run_id: str,
        *,
        human_input: str | None = None,
        budget: dict[str, Any] | None = None,
        record: RunRecord | None = None,
    ) -> RunRecord:
        """Queue `run_id` for its endpoint's slot, run it as a Ray task, return its record.

        `record` is the run as the caller just read it (else it is read here)."""
        ray = self.connect()
        if record is None:
            record = _read(store_url, [run_id])[0]
        endpoint = endpoint_of(RunSpec.from_dict(record.spec).model)
        seen = Seen(record.status, record.sessions)
        slots, task = self._remote()
        renewing: asyncio.Task[None] | None = None
        try:
            await slots.acquire.remote(endpoint, run_id, self.limit)
            renewing = asyncio.create_task(_renew(slots, endpoint, run_id))
            try:
                outcome = await task.remote(store_url, run_id, seen, human_input, budget)
            except ray.exceptions.RayError as exc:
                raise RunError(
                    f"run {run_id}: its Ray task failed ({type(exc).__name__}: "
                    f"{str(exc).splitlines()[0] if str(exc) else ''}); the run keeps its last "
                    f"checkpoint: guardsearch runs resume {run_id}"
                ) from exc
        finally:
            if renewing is not None:
                renewing.cancel()
            slots.release.remote(endpoint, run_id, self.limit)
        if isinstance(outcome, tuple):
            usage, message = outcome
            raise ConfigError(message) if usage else RunError(message)
        assert isinstance(outcome, RunRecord)
        return outcome

    async def session(self, store_url: str, run_id: str, ask: SessionAsk) -> RunRecord:
        """`run`, for `execute`. A fleet builds each run's model from its spec in the
        worker; a model object cannot travel there, so `model` is refused."""
        if ask.model is not None:
            raise ConfigError(
                "the ray executor builds the model from the run's spec in each worker; "
                "it cannot take a model object"
            )
        return await self.run(store_url, run_id, human_input=ask.human_input, budget=ask.budget)

    async def _line_up(self, records: Sequence[RunRecord]) -> None:
        """Put the runs in line for their endpoints' slots in the order given, before
        any of them asks for its slot, so they are served in that order. (A run whose
        spec names no model is left out: `run` reports its error.)"""
        by_endpoint: dict[str, list[str]] = {}
        for record in records:
            try:
                endpoint = endpoint_of(RunSpec.from_dict(record.spec).model)
            except GuardsearchError:
                continue
            by_endpoint.setdefault(endpoint, []).append(record.id)
        slots, _ = self._remote()
        for endpoint, run_ids in by_endpoint.items():
            await slots.enqueue.remote(endpoint, run_ids, self.limit)

    def execute_all(
        self, store_url: str, run_ids: Sequence[str]
    ) -> list[RunRecord | GuardsearchError]:
        """Every run at once (queued per endpoint, spread over the workers); each run's
        record, or the error that stopped it, in the order of `run_ids`."""

        records = _read(store_url, run_ids)  # one connection, however many runs

        async def all_runs() -> list[RunRecord | GuardsearchError]:
            await self._line_up(records)
            done = await asyncio.gather(
                *(self.run(store_url, r.id, record=r) for r in records), return_exceptions=True
            )
            out: list[RunRecord | GuardsearchError] = []
            for item in done:
                if isinstance(item, (RunRecord, GuardsearchError)):
                    out.append(item)
                else:
                    raise item
            return out

        return asyncio.run(all_runs())


def run_executor(
    name: str, *, address: str | None = None, per_endpoint: int | None = None
) -> RunExecutor:
    """The executor `--executor NAME` names (`local` or `ray`)."""
    if name == "local":
        if address is not None or per_endpoint is not None:
            raise ConfigError("--ray-address and --per-endpoint need --executor ray")
        return LocalRunExecutor()
    if name == "ray":
        return RayFleet(address, per_endpoint=per_endpoint)
    raise ConfigError(f"unknown executor {name!r}; use local or ray")


# The executor `execute` uses: local unless a process (`serve --executor ray`) chose one.
_CHOSEN: list[RunExecutor] = []


def use_executor(executor: RunExecutor) -> None:
    """Make `execute` run every durable run of this process on `executor`. A fleet
    connects now, in this (main) thread: a cluster it cannot reach fails here."""
    if isinstance(executor, RayFleet):
        executor.connect()
    _CHOSEN[:] = [executor]


def execute(
    store_url: str,
    run_id: str,
    *,
    human_input: str | None = None,
    model: Model | None = None,
) -> RunRecord:
    """Run (or resume) `run_id` on this process's executor until it ends or pauses.

    This is the one call `serve` makes for every durable run it starts or resumes.
    `model` is the served model, loaded here; on a fleet each worker builds the same
    model from the run's spec instead, so it is not passed on.
    """
    executor = _CHOSEN[0] if _CHOSEN else LocalRunExecutor()
    if executor.name != "local":
        model = None
    return executor.execute(store_url, run_id, human_input=human_input, model=model)
