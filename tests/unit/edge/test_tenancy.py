"""Two keys, one server: every run belongs to the key that started it (issue 34).

KEY2 gets the 404 of an unknown id on every route of KEY1's runs (show, export,
event stream, nodes, cancel, resume; an async job's status), and KEY1's runs are not in
KEY2's list; an admin key sees all; a keyless server has one tenant."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from guardsearch import ScriptedModel
from guardsearch.runs import RunSpec, create_run, execute_run
from guardsearch.server import create_app
from guardsearch.server.security import key_id
from guardsearch.store.open import open_store

KEY1, KEY2, ADMIN = "key-one-aaaaaaaa", "key-two-bbbbbbbb", "admin-key-cccccccc"
WINNING = ['{"steps": ["5 * 6", "7 + 3"]}', '{"steps": ["30 - 10"]}', '{"steps": ["4 + 20"]}']


def h(key: str) -> dict[str, str]:
    return {"X-API-Key": key}


@pytest.fixture(autouse=True)
def no_keys_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GUARDSEARCH_API_KEY", "GUARDSEARCH_API_KEY_FILE", "GUARDSEARCH_ADMIN_KEY"):
        monkeypatch.delenv(var, raising=False)


def _run(db: Path, tenant: str, *, execute: bool) -> str:
    store = open_store(str(db))
    spec = RunSpec(app="game24", problem={"numbers": "4 5 6 10"}, strategy="astar",
                   tenant=tenant)  # fmt: skip
    run = create_run(spec, store)
    if execute:
        asyncio.run(execute_run(run.id, store, model=ScriptedModel(list(WINNING))))
    store.close()
    return run.id


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, Any]:
    db = tmp_path / "runs.db"
    return {
        "db": db,
        "done1": _run(db, key_id(KEY1), execute=True),  # KEY1's, succeeded
        "new1": _run(db, key_id(KEY1), execute=False),  # KEY1's, not started: cancellable
        "done2": _run(db, key_id(KEY2), execute=True),  # KEY2's
        "cli": _run(db, "", execute=True),  # nobody's key: the CLI's
    }


@pytest.fixture
async def client(runs: dict[str, Any]) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(model=ScriptedModel(["{}"] * 40), providers=[], api_key=[KEY1, KEY2],
                     admin_key=ADMIN, run_store=str(runs["db"]))  # fmt: skip
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
        yield c


async def listed(client: httpx.AsyncClient, key: str) -> set[str]:
    response = await client.get("/ui/api/runs", headers=h(key))
    assert response.status_code == 200, response.text
    return {r["id"] for r in response.json()}


async def test_each_key_lists_its_own_runs_and_the_admin_all(
    client: httpx.AsyncClient, runs: dict[str, Any]
) -> None:
    assert await listed(client, KEY1) == {runs["done1"], runs["new1"]}
    assert await listed(client, KEY2) == {runs["done2"]}
    assert await listed(client, ADMIN) == {runs[k] for k in ("done1", "new1", "done2", "cli")}


ROUTES = [
    ("GET", "/ui/api/runs/{id}", None),
    ("GET", "/ui/api/runs/{id}/export", None),
    ("GET", "/ui/api/runs/{id}/stream", None),
    ("GET", "/ui/api/runs/{id}/nodes/n2", None),
    ("POST", "/ui/api/runs/{id}/resume", {"input": "yes"}),
    ("POST", "/ui/api/runs/{id}/cancel", None),
]


@pytest.mark.parametrize(("method", "route", "body"), ROUTES)
async def test_another_keys_run_is_a_404_like_an_unknown_id(
    client: httpx.AsyncClient, runs: dict[str, Any], method: str, route: str, body: Any
) -> None:
    unknown = await client.request(method, route.format(id="run-nope"), json=body,
                                   headers=h(KEY2))  # fmt: skip
    theirs = await client.request(method, route.format(id=runs["done1"]), json=body,
                                  headers=h(KEY2))  # fmt: skip
    assert unknown.status_code == theirs.status_code == 404, theirs.text
    assert unknown.json() == theirs.json()  # nothing tells the two apart
    assert runs["done1"] not in theirs.text


async def test_the_owner_and_the_admin_reach_the_same_routes(
    client: httpx.AsyncClient, runs: dict[str, Any]
) -> None:
    run_id = runs["done1"]
    for key in (KEY1, ADMIN):
        shown = await client.get(f"/ui/api/runs/{run_id}", headers=h(key))
        assert shown.status_code == 200 and shown.json()["status"] == "succeeded"
        assert shown.json()["spec"]["tenant"] == key_id(KEY1) and KEY1 not in shown.text
        exported = await client.get(f"/ui/api/runs/{run_id}/export", headers=h(key))
        assert exported.status_code == 200 and exported.json()["run"]["id"] == run_id
        nodes = await client.get(f"/ui/api/runs/{run_id}/nodes/n2", headers=h(key))
        assert nodes.status_code == 200 and nodes.json()["proposed_by"]
        resumed = await client.post(f"/ui/api/runs/{run_id}/resume", json={"input": "x"},
                                    headers=h(key))  # fmt: skip
        assert resumed.status_code == 409  # found, but not paused
    assert (await client.get("/ui/api/runs/" + runs["cli"], headers=h(KEY1))).status_code == 404


async def test_another_key_cannot_cancel_and_the_owner_can(
    client: httpx.AsyncClient, runs: dict[str, Any]
) -> None:
    run_id = runs["new1"]
    refused = await client.post(f"/ui/api/runs/{run_id}/cancel", headers=h(KEY2))
    assert refused.status_code == 404
    store = open_store(str(runs["db"]), read_only=True)
    assert store.get_run(run_id).status == "created"  # untouched
    store.close()
    done = await client.post(f"/ui/api/runs/{run_id}/cancel", headers=h(KEY1))
    assert done.status_code == 200 and done.json()["status"] == "cancelled", done.text


async def test_a_run_started_over_http_belongs_to_its_key(
    client: httpx.AsyncClient, runs: dict[str, Any]
) -> None:
    body = {"app": "game24", "problem": {"numbers": "4 5 6 10"}, "budget": {"calls": 5}}
    started = await client.post("/ui/api/runs", json=body, headers=h(KEY2))
    assert started.status_code == 202, started.text
    run_id = started.json()["id"]
    assert run_id in await listed(client, KEY2) and run_id not in await listed(client, KEY1)
    assert (await client.get(f"/ui/api/runs/{run_id}", headers=h(KEY1))).status_code == 404
    store = open_store(str(runs["db"]), read_only=True)
    spec = store.get_run(run_id).spec
    store.close()
    assert spec["tenant"] == key_id(KEY2) and KEY2 not in json.dumps(spec)


async def test_an_async_job_is_its_keys_only(client: httpx.AsyncClient) -> None:
    accepted = await client.post("/run", json={"task": "Who painted it?", "async": True},
                                 headers=h(KEY1))  # fmt: skip
    assert accepted.status_code == 202
    url = accepted.json()["status_url"]
    assert (await client.get(url, headers=h(KEY2))).status_code == 404
    assert (await client.get(url, headers=h(KEY1))).status_code == 200
    assert (await client.get(url, headers=h(ADMIN))).status_code == 200


async def test_a_keyless_server_has_one_tenant(runs: dict[str, Any]) -> None:
    app = create_app(model=ScriptedModel(["{}"]), providers=[], run_store=str(runs["db"]))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
        rows = (await c.get("/ui/api/runs")).json()
        assert {r["id"] for r in rows} == {runs[k] for k in ("done1", "new1", "done2", "cli")}


def test_the_list_stream_reads_the_same_filtered_list(runs: dict[str, Any]) -> None:
    """`/ui/api/runs/stream` sends what `_listed` reads, as the list does."""
    from guardsearch.server.tenancy import Tenant
    from guardsearch.server.ui_runs import _listed

    store = open_store(str(runs["db"]), read_only=True)
    try:
        two = {r.id for r in _listed(Tenant(key_id(KEY2), keyed=True))(store)}
        admin = {r.id for r in _listed(Tenant(key_id(ADMIN), admin=True, keyed=True))(store)}
    finally:
        store.close()
    assert two == {runs["done2"]}
    assert admin == {runs[k] for k in ("done1", "new1", "done2", "cli")}
