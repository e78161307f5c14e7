"""Real sockets: a pooled client reuses connections, and a durable run survives a server
that goes away mid-run (failed with model_error, resumed later, nothing paid twice)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.unit.servers.local_server import LocalServer

from guardsearch import ModelRequest, OpenAIModel, allow_real_models
from guardsearch.models.structured import STRUCTURED_ENV
from guardsearch.runs import RunSpec, create_run, execute_run
from guardsearch.store.sqlite import SqliteRunStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
from durable_apps import answer_for

PLAIN = ModelRequest(messages=())


@pytest.fixture(autouse=True)
def local_http(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # These backends reach only a server this test runs on 127.0.0.1.
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path))
    monkeypatch.delenv(STRUCTURED_ENV, raising=False)
    allow_real_models(True)
    yield
    allow_real_models(False)


async def test_the_pool_keeps_one_connection_alive_across_calls() -> None:
    server = LocalServer(lambda request: "hi").start()
    try:
        async with OpenAIModel(base_url=server.url, model="m") as backend:
            for _ in range(5):
                assert (await backend.complete(PLAIN)).text == "hi"
        assert server.requests == 5
        assert len(server.connections) == 1
    finally:
        server.stop()


async def test_a_durable_run_whose_server_goes_away_fails_and_resumes_paying_once(
    tmp_path: Path,
) -> None:
    answer = answer_for("astar")
    paid: dict[str, int] = {}

    def counted(request: ModelRequest) -> str:
        paid[request.digest()] = paid.get(request.digest(), 0) + 1
        if sum(paid.values()) == 3:  # the 3rd call is answered, then the server is gone
            server.vanish()
        return answer(request)

    server = LocalServer(counted).start()

    store = SqliteRunStore(tmp_path / "runs.db")
    spec = RunSpec(
        app="durable_apps:search_app",
        strategy="astar",
        model=f"openai:{server.url}#fake?attempts=2&connect_timeout=2",
    )
    try:
        run = create_run(spec, store).id
        broken = await execute_run(run, store)
        assert (broken.status, broken.termination) == ("failed", "model_error")
        assert "127.0.0.1" in (broken.error or "")
        before = dict(paid)
        assert sum(before.values()) == 3
        assert broken.calls == 3  # every answered call is kept
        server = LocalServer(counted, port=server.port).start()  # back, same address
        resumed = await execute_run(run, store)
        assert resumed.status == "succeeded"
        assert set(paid.values()) == {1}, "a resumed run paid for a call twice"
        whole_store = SqliteRunStore(tmp_path / "whole.db")
        whole = await execute_run(create_run(spec, whole_store).id, whole_store)
        whole_store.close()
        assert resumed.result == whole.result
        assert resumed.calls == whole.calls == sum(paid.values()) - whole.calls
    finally:
        server.stop()
        store.close()


def test_a_model_dropped_inside_its_loop_still_closes_its_pool() -> None:
    import asyncio
    import gc

    server = LocalServer(lambda request: "hi").start()

    async def use_and_drop() -> None:
        backend = OpenAIModel(base_url=server.url, model="m")
        assert (await backend.complete(PLAIN)).text == "hi"
        del backend
        gc.collect()

    try:
        asyncio.run(use_and_drop())  # an unclosed socket would fail this test (-W error)
        gc.collect()
    finally:
        server.stop()
