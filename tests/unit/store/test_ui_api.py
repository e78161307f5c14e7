"""The viewer's HTTP side (server/ui.py) without a browser: the page is open, its data
takes the key, and the actions answer like `runs resume` / `runs cancel` would."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from guardsearch import ScriptedModel
from guardsearch.runs import RunSpec, create_run, execute_run
from guardsearch.server import create_app
from guardsearch.server.security import key_id
from guardsearch.store.open import open_store

KEY = {"X-API-Key": "k1"}
WINNING = ['{"steps": ["5 * 6", "7 + 3"]}', '{"steps": ["30 - 10"]}', '{"steps": ["4 + 20"]}']


Served = tuple[httpx.AsyncClient, str]


@pytest.fixture
def served(tmp_path: Path) -> Served:
    db = tmp_path / "runs.db"
    store = open_store(str(db))
    # the run belongs to the key k1 (as if POST /ui/api/runs had started it with k1)
    spec = RunSpec(app="game24", problem={"numbers": "4 5 6 10"}, strategy="astar",
                   tenant=key_id("k1"))  # fmt: skip
    run = create_run(spec, store)
    asyncio.run(execute_run(run.id, store, model=ScriptedModel(list(WINNING))))
    store.close()
    app = create_app(model=ScriptedModel(["unused"]), api_key="k1", run_store=str(db))
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://ui")
    return client, run.id


async def test_the_page_is_open_and_its_data_needs_the_key(served: Served) -> None:
    client, _ = served
    page = await client.get("/ui")
    assert page.status_code == 200 and 'id="gs-boot"' in page.text
    assert '"needs_key":true' in page.text and "k1" not in page.text
    assert (await client.get("/ui/api/runs")).status_code == 401
    assert (await client.get("/ui/api/runs", headers=KEY)).status_code == 200


async def test_runs_are_listed_and_filtered(served: Served) -> None:
    client, run_id = served
    runs = (await client.get("/ui/api/runs", headers=KEY)).json()
    assert [(r["id"], r["status"], r["app"]) for r in runs] == [(run_id, "succeeded", "game24")]
    assert (await client.get("/ui/api/runs?status=paused", headers=KEY)).json() == []
    assert (await client.get("/ui/api/runs?app=plan", headers=KEY)).json() == []
    bad = await client.get("/ui/api/runs?status=nope", headers=KEY)
    assert bad.status_code == 400 and "unknown status" in bad.json()["error"]["message"]


async def test_a_nodes_prompts_come_from_the_paid_calls(served: Served) -> None:
    client, run_id = served
    calls = (await client.get(f"/ui/api/runs/{run_id}/nodes/n2", headers=KEY)).json()
    (proposed,) = calls["proposed_by"]  # n2 ("7 + 3") came from the root's one call
    assert proposed["messages"][-1]["content"] == "Input: 4 5 6 10\nPossible next steps:"
    assert json.loads(proposed["text"]) == json.loads(WINNING[0])
    assert calls["expanded_with"] == []


async def test_only_a_paused_run_takes_an_answer_and_unknown_runs_are_404(
    served: Served,
) -> None:
    client, run_id = served
    answer = await client.post(f"/ui/api/runs/{run_id}/resume", json={"input": "yes"}, headers=KEY)
    assert answer.status_code == 409 and "not paused" in answer.json()["error"]["message"]
    empty = await client.post(f"/ui/api/runs/{run_id}/resume", json={"input": ""}, headers=KEY)
    assert empty.status_code == 400
    assert (await client.post("/ui/api/runs/run-nope/cancel", headers=KEY)).status_code == 404
    assert (await client.get("/ui/api/runs/run-nope/stream", headers=KEY)).status_code == 404
    done = await client.post(f"/ui/api/runs/{run_id}/cancel", headers=KEY)
    assert done.status_code == 409  # a succeeded run is final


async def test_a_durable_run_started_over_the_api_runs_on_the_served_model(
    tmp_path: Path,
) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(WINNING))
    db = tmp_path / "runs.db"
    app = create_app(model_spec=f"scripted:{answers}", run_store=str(db))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://ui"
    ) as client:
        body = {"app": "game24", "problem": {"numbers": "4 5 6 10"}, "budget": {"calls": 20}}
        started = await client.post("/ui/api/runs", json=body)
        assert started.status_code == 202, started.text
        run_id = started.json()["id"]
        assert started.json()["view"] == f"/ui#/run/{run_id}"
        for _ in range(200):
            (run,) = (await client.get("/ui/api/runs")).json()
            if run["status"] not in ("created", "running"):
                break
            await asyncio.sleep(0.05)
        assert (run["id"], run["status"], run["strategy"]) == (run_id, "succeeded", "astar")
        apps = {a["name"]: a for a in (await client.get("/ui/api/apps")).json()}
        assert apps["game24"]["example"] == {"numbers": "4 5 6 10"}
        assert "blocks" not in apps  # not served: a request may not build it
        # only registered apps that a request may build, never an import path
        for app_name in ("nope", "os:system", "durable_apps:asking_app"):
            refused = await client.post("/ui/api/runs", json={**body, "app": app_name})
            assert refused.status_code == 400, app_name
        bad = await client.post("/ui/api/runs", json={**body, "problem": {"numbers": "a b c d"}})
        assert bad.status_code == 400 and "not a number" in bad.json()["error"]["message"]
    store = open_store(str(db), read_only=True)
    assert store.get_run(run_id).spec["model"] == f"scripted:{answers}"
    store.close()
