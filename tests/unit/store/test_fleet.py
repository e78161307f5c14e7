"""The run fleet (runs/fleet.py): durable runs as Ray tasks on a real PostgreSQL store.

One local Ray (two worker processes) and one fresh Postgres database serve the whole
module. The main test runs 20 scripted searches over the fleet, SIGKILLs the worker
process of one of them mid-run, and checks from the store that every run ends like
its uninterrupted twin and that no request was paid twice.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
import ray
from fleet_apps import ANSWER, answers_file, problems
from typer.testing import CliRunner

from guardsearch import ScriptedModel
from guardsearch.cli import app as cli
from guardsearch.core.errors import ConfigError
from guardsearch.runs import RunSpec, create_run, execute_run
from guardsearch.runs.fleet import (
    EndpointSlots,
    LocalRunExecutor,
    RayFleet,
    endpoint_of,
    use_executor,
)
from guardsearch.server import create_app
from guardsearch.store.base import RunRecord, RunStore
from guardsearch.store.open import open_store
from guardsearch.store.sqlite import SqliteRunStore

APP = "fleet_apps:build"
WINNING = ['{"steps": ["5 * 6", "7 + 3"]}', '{"steps": ["30 - 10"]}', '{"steps": ["4 + 20"]}']
HERE = Path(__file__).resolve().parent
STRATEGIES = ("beam", "astar", "bfs", "dfs")


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    """A local Ray with two CPUs: two worker processes run the fleet's tasks."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module=r"ray(\..*)?$")
        warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*ray.*")
        # The workers import the test app (`fleet_apps`) from this folder.
        path = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"PYTHONPATH": path}},
        )
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def fleet_db(pg_dsn: str) -> str:
    """A fresh database of the test server, as a URL every worker can open."""
    import psycopg

    name = f"fleet_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(pg_dsn)._replace(path=f"/{name}"))


@pytest.fixture
def store(fleet_db: str) -> Iterator[RunStore]:
    the_store = open_store(fleet_db)
    yield the_store
    the_store.close()


def _spec(problem: dict[str, Any], model: str, strategy: str = "dfs") -> RunSpec:
    return RunSpec(app=APP, problem=problem, strategy=strategy, model=model, budget={"calls": 300})


def _paid(store: RunStore, run_id: str) -> list[int]:
    """How often each request of the run was paid for (the memo's bill)."""
    return [c["paid"] for c in store.calls(run_id)]


class Killer(threading.Thread):
    """SIGKILLs the worker process holding a run once it has saved `after` checkpoints."""

    def __init__(self, url: str, after: int = 3) -> None:
        super().__init__(daemon=True)
        self.url, self.after = url, after
        self.victim: RunRecord | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        store = open_store(self.url)
        try:
            while not self.stop.is_set() and self.victim is None:
                for r in store.list_runs(status="running"):
                    if r.checkpoints >= self.after and r.owner:
                        os.kill(int(r.owner.split(":")[1]), signal.SIGKILL)
                        self.victim = r
                        break
                time.sleep(0.02)
        finally:
            store.close()


def test_a_killed_worker_s_run_is_taken_over_and_nothing_is_paid_twice(
    cluster: None, fleet_db: str, store: RunStore, tmp_path: Path
) -> None:
    model = f"scripted:{answers_file(tmp_path)}?delay=0.03"
    specs = [_spec(p, model, STRATEGIES[i % 4]) for i, p in enumerate(problems(20))]

    reference = SqliteRunStore(tmp_path / "reference.db")
    expected = []
    for spec in specs:  # each run uninterrupted, in this process
        run = create_run(spec, reference)
        done = asyncio.run(
            execute_run(run.id, reference, model=ScriptedModel([ANSWER], repeat_last=True))
        )
        assert done.status == "succeeded"
        expected.append((done.result, sum(_paid(reference, run.id))))

    ids = [create_run(spec, store).id for spec in specs]
    killer = Killer(fleet_db)
    killer.start()
    try:
        records = RayFleet(per_endpoint=2).execute_all(fleet_db, ids)
    finally:
        killer.stop.set()
        killer.join()

    assert killer.victim is not None, "no run was killed mid-run"
    for run_id, record, (result, paid) in zip(ids, records, expected, strict=True):
        assert isinstance(record, RunRecord), record
        assert record.status == "succeeded"
        assert record.result == result
        assert sum(_paid(store, run_id)) == paid
    bills = [p for run_id in ids for p in _paid(store, run_id)]
    assert max(bills) == 1, "a request was paid twice"
    assert sum(bills) == sum(paid for _, paid in expected)
    victim = store.get_run(killer.victim.id)
    assert victim.sessions == 2  # the killed session and the one that took over
    assert victim.owner is None  # ended: no worker holds it


def test_queued_runs_wait_as_created_one_per_endpoint_and_cancel_and_pause_work(
    cluster: None, fleet_db: str, store: RunStore, tmp_path: Path
) -> None:
    model = f"scripted:{answers_file(tmp_path)}?delay=0.02"
    first, queued, paused = (
        create_run(_spec(p, model, strategy), store).id
        for p, strategy in (
            ({"target": 12, "depth": 6}, "bfs"),  # 112 calls: cancelled long before its end
            ({"target": 8, "depth": 4}, "dfs"),
            ({"target": 9, "depth": 4, "ask_at": 2}, "dfs"),
        )
    )
    seen: list[dict[str, Any]] = []
    fleet = RayFleet(per_endpoint=1)

    def watch() -> None:
        watcher = open_store(fleet_db)
        try:
            deadline = time.monotonic() + 120  # fail, never hang, if it never starts
            while watcher.get_run(first).status != "running":
                assert time.monotonic() < deadline, "the first run never started"
                time.sleep(0.02)
            seen.append({r.id: (r.status, r.owner) for r in watcher.list_runs()})
            watcher.cancel(queued)  # still queued: cancelled at once, never executed
            watcher.cancel(first)  # running: stops at its next checkpoint
        finally:
            watcher.close()

    thread = threading.Thread(target=watch)
    thread.start()
    records = fleet.execute_all(fleet_db, [first, queued, paused])
    thread.join()

    statuses = seen[0]
    assert statuses[first][0] == "running" and statuses[first][1]  # the worker holding it
    assert statuses[queued] == ("created", None) and statuses[paused] == ("created", None)
    by_id = {r.id: r for r in records if isinstance(r, RunRecord)}
    assert by_id[first].status == "cancelled"
    assert by_id[queued].status == "cancelled" and by_id[queued].sessions == 0
    assert by_id[paused].status == "paused" and by_id[paused].question
    answered = fleet.execute(fleet_db, paused, human_input="yes")
    assert answered.status == "succeeded"
    assert answered.result is not None and sum(answered.result["answer"]) == 9
    resumed = fleet.execute(fleet_db, first)  # a cancelled run resumes on the fleet
    assert resumed.status == "succeeded" and max(_paid(store, first)) == 1


def test_endpoint_slots_bound_each_endpoint_and_serve_in_order() -> None:
    async def scenario() -> list[str]:
        slots = EndpointSlots()
        order: list[str] = []

        async def run(name: str, endpoint: str) -> None:
            await slots.acquire(endpoint, name, 2)
            order.append(name)

        assert await slots.acquire("a", "r1", 2) == 1
        assert await slots.acquire("a", "r1", 2) == 1  # a retried task keeps its slot
        await slots.acquire("a", "r2", 2)
        waiting = [asyncio.create_task(run(n, "a")) for n in ("r3", "r4")]
        other = asyncio.create_task(run("s1", "b"))  # another endpoint: not held up
        await asyncio.sleep(0.01)
        await other
        assert order == ["s1"] and slots.state()["a"]["waiting"] == ["r3", "r4"]
        slots.release("a", "r2", 2)
        slots.release("a", "r2", 2)  # twice: harmless
        await asyncio.sleep(0.01)
        assert order == ["s1", "r3"]
        slots.release("a", "r1", 2)
        await asyncio.gather(*waiting)
        return order

    assert asyncio.run(scenario()) == ["s1", "r3", "r4"]


def test_a_lined_up_batch_is_served_in_its_order_whatever_order_it_asks_in() -> None:
    async def scenario() -> list[str]:
        slots = EndpointSlots()
        order: list[str] = []

        async def run(name: str) -> None:
            await slots.acquire("a", name, 1)
            order.append(name)
            await asyncio.sleep(0.01)
            slots.release("a", name, 1)

        await slots.enqueue("a", ["r1", "r2", "r3", "gone"], 1)
        assert slots.state()["a"] == {"held": ["r1"], "waiting": ["r2", "r3", "gone"]}
        slots.release("a", "gone", 1)  # lined up, never asked: leaves the line
        await asyncio.gather(*(run(n) for n in ("r3", "r2", "r1")))  # asks in reverse
        assert slots.state()["a"] == {"held": [], "waiting": []}
        return order

    assert asyncio.run(scenario()) == ["r1", "r2", "r3"]


def test_the_slot_of_a_submitter_that_died_frees_itself() -> None:
    async def scenario() -> None:
        slots = EndpointSlots()
        await slots.acquire("a", "dead", 1, 0.2)  # its submitter never renews nor releases
        await slots.acquire("a", "alive", 1, 0.2)  # waits out the dead one's lease
        assert slots.state()["a"] == {"held": ["alive"], "waiting": []}
        await asyncio.sleep(0.1)
        slots.renew("a", "alive", 0.2)  # a renewed slot is kept past its first lease
        await asyncio.sleep(0.15)
        waiter = asyncio.create_task(slots.acquire("a", "next", 1, 0.2))
        await asyncio.sleep(0.02)
        assert not waiter.done()

    asyncio.run(asyncio.wait_for(scenario(), 5))


def test_runs_are_queued_by_endpoint() -> None:
    assert endpoint_of("openai:http://gpu1:8000/v1#qwen") == "openai:http://gpu1:8000"
    assert endpoint_of("openai:http://gpu1:8000/v1#other?timeout=5") == "openai:http://gpu1:8000"
    assert endpoint_of("openai:#gpt-4o-mini") == "openai:https://api.openai.com"
    assert endpoint_of("embedded?extra_bufts=off") == "embedded"
    assert endpoint_of("scripted:/tmp/a.json?delay=1") == "scripted"


async def test_serve_with_the_ray_executor_runs_a_run_started_from_the_ui_on_a_worker(
    cluster: None, fleet_db: str, tmp_path: Path
) -> None:
    answers = tmp_path / "game24.json"
    answers.write_text(json.dumps(WINNING))
    app = create_app(model_spec=f"scripted:{answers}?delay=0.3", run_store=fleet_db)
    use_executor(RayFleet())  # what `serve --executor ray` does
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://ui"
        ) as client:
            body = {"app": "game24", "problem": {"numbers": "4 5 6 10"}, "budget": {"calls": 20}}
            started = await client.post("/ui/api/runs", json=body)
            assert started.status_code == 202, started.text
            run_id = started.json()["id"]
            workers = set()
            for _ in range(600):
                runs = (await client.get("/ui/api/runs")).json()
                run = next(r for r in runs if r["id"] == run_id)  # as the viewer lists it
                if run["status"] == "running":
                    workers.add(run["owner"])
                if run["status"] not in ("created", "running"):
                    break
                await asyncio.sleep(0.05)
    finally:
        use_executor(LocalRunExecutor())
        app.state.ui.reader.close()  # the app's lifespan would (ASGITransport runs none)
    assert run["status"] == "succeeded"
    assert workers and all(int(w.split(":")[1]) != os.getpid() for w in workers)


def test_runs_start_and_resume_on_the_fleet_from_the_command_line(
    cluster: None, fleet_db: str, store: RunStore, tmp_path: Path
) -> None:
    model = f"scripted:{answers_file(tmp_path)}"
    problem = json.dumps({"target": 9, "depth": 4, "ask_at": 2})
    start = ["runs", "start", APP, problem, "--strategy", "dfs", "--model", model]
    where = ["--store", fleet_db, "--executor", "ray", "--json"]
    paused = CliRunner().invoke(cli, [*start, *where])
    assert paused.exit_code == 3, paused.output  # paused on a worker, waiting for a person
    run_id = json.loads(paused.stdout)["id"]
    done = CliRunner().invoke(cli, ["runs", "resume", run_id, "--input", "yes", *where])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["result"]["answer"] == [3, 3, 2, 1]
    assert store.get_run(run_id).sessions == 2


def test_the_fleet_refuses_a_model_object_before_it_touches_ray() -> None:
    """Both executors share `execute`; only the local one can take a model object."""
    with pytest.raises(ConfigError, match="cannot take a model object"):
        RayFleet(address="ray://nowhere:1").execute(
            "sqlite:///nowhere.db", "run-x", model=ScriptedModel(["x"])
        )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--executor", "dask"], "unknown executor 'dask'; use local or ray"),
        (["--ray-address", "auto"], "--ray-address and --per-endpoint need --executor ray"),
    ],
)
def test_a_bad_executor_is_a_one_line_error(args: list[str], message: str) -> None:
    got = CliRunner().invoke(cli, ["runs", "resume", "run-x", *args])
    assert got.exit_code == 2 and got.output.strip() == f"error: {message}"


@pytest.mark.model
def test_the_embedded_model_s_runs_survive_a_killed_worker_paying_each_call_once(
    cluster: None, fleet_db: str, store: RunStore, tmp_path: Path
) -> None:
    """The fault test on 3 real runs (game24, A*, the embedded model in each worker):
    each ends as its uninterrupted twin did (on 2026-11-27: two solved, "2 3 5 12" out
    of budget both times), paying each call once."""
    specs = [
        RunSpec(
            app="game24",
            problem={"numbers": n},
            strategy="astar",
            model="embedded",
            budget={"calls": 8},
        )
        for n in ("4 5 6 10", "1 1 4 6", "2 3 5 12")
    ]
    reference = SqliteRunStore(tmp_path / "reference.db")
    expected = []
    for spec in specs:  # uninterrupted, in this process
        run = create_run(spec, reference)
        done = asyncio.run(execute_run(run.id, reference))
        expected.append((done.status, done.result, sum(_paid(reference, run.id))))

    ids = [create_run(spec, store).id for spec in specs]
    killer = Killer(fleet_db, after=2)
    killer.start()
    try:
        records = RayFleet().execute_all(fleet_db, ids)
    finally:
        killer.stop.set()
        killer.join()

    assert killer.victim is not None, "no run was killed mid-run"
    for run_id, record, (status, result, paid) in zip(ids, records, expected, strict=True):
        assert isinstance(record, RunRecord), record
        assert (record.status, record.result) == (status, result)
        assert sum(_paid(store, run_id)) == paid and max(_paid(store, run_id)) == 1
    assert store.get_run(killer.victim.id).sessions == 2
