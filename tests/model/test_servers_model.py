"""Every app through a real OpenAI-compatible server: llama-cpp-python's server on the
embedded GGUF (`python -m guardsearch.models.llama_server`), reached by `openai:` specs.

One server for the module (started once, about 10 s); each test uses the smallest
budget that still shows the app works through HTTP: the negotiated structured-output
mode (`grammar`, the embedded backend's own grammar: this server refuses `json_schema`
with an HTTP 500), answers of the right shape, usage counted from the server's `usage`. The last
test kills the server in the middle of a durable run, starts it again on the same
port and resumes the run, paying for no call twice.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from typer.testing import CliRunner

from guardsearch.apps.game24 import check_answer, parse_numbers
from guardsearch.cli import app
from guardsearch.core.messages import Completion, ModelRequest
from guardsearch.loops.research import AgentResponse
from guardsearch.models.base import WrapperModel
from guardsearch.models.llama_server import LlamaServerProcess, free_port
from guardsearch.models.spec import model_from_spec
from guardsearch.runs import RunSpec, create_run, execute_run
from guardsearch.store.sqlite import SqliteRunStore

pytestmark = pytest.mark.model
pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server]")

runner = CliRunner()
SCHEMA = Path(__file__).parents[2] / "examples" / "colours.schema.json"
SRC = Path(__file__).parents[2] / "src"
PUZZLE = "4 5 6 10"
QUESTION = "Who painted A Sunday Afternoon on the Island of La Grande Jatte?"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServerProcess]:
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    process = LlamaServerProcess("embedded", log=log).start()
    try:
        yield process
    finally:
        process.stop()


def invoke(*args: str) -> tuple[int, dict[str, Any], str]:
    result = runner.invoke(app, list(args))
    try:
        payload = json.loads(result.stdout)
    except ValueError:
        pytest.fail(f"no JSON from {args[:2]} (exit {result.exit_code}): {result.output}")
    return result.exit_code, payload, result.stderr


def model_calls(trace: Path) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
    return [e for e in events if e.get("kind") == "model_call"]


def assert_grammar_mode(calls: list[dict[str, Any]]) -> None:
    """Every schema-carrying call went out with the embedded backend's grammar; none fell
    back."""
    servers = [c["data"].get("server") or {} for c in calls]
    assert {s.get("structured") for s in servers} == {"grammar"}, servers
    assert not any("structured_fallback" in s for s in servers)


def test_models_json_shows_the_negotiated_mode(server: LlamaServerProcess) -> None:
    code, payload, stderr = invoke("models", "--json", "--model", server.spec())
    assert code == 0, stderr
    described = payload["model"]
    assert described["name"] == "qwen"
    mode = described["structured"]
    assert mode["mode"] == "grammar"
    if mode["source"] == "probe":  # a port this machine probed before answers from cache
        probes = {p["mode"]: p for p in mode["probes"]}
        assert (probes["json_schema"]["result"], probes["json_schema"]["status"]) == (
            "refused",
            500,
        )
        assert probes["grammar"]["result"] == "honoured"
    else:
        assert mode["source"] == "cached"


def test_ask_with_a_schema_returns_schema_valid_json(
    server: LlamaServerProcess, tmp_path: Path
) -> None:
    trace = tmp_path / "trace.jsonl"
    code, payload, stderr = invoke(
        "ask",
        "List three primary colours",
        "--schema",
        str(SCHEMA),
        "--json",
        "--model",
        server.spec(),
        "--trace",
        str(trace),
    )
    assert code == 0, stderr
    assert payload["ok"] is True
    jsonschema.validate(payload["value"], json.loads(SCHEMA.read_text()))
    assert payload["usage"]["prompt_tokens"] > 0
    assert payload["usage"]["completion_tokens"] > 0
    assert_grammar_mode(model_calls(trace))


def test_solve_game24_through_the_server(server: LlamaServerProcess, tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    code, payload, stderr = invoke(
        "solve",
        "game24",
        PUZZLE,
        "--json",
        "--quiet",
        "--budget-calls",
        "40",
        "--model",
        server.spec(),
        "--trace",
        str(trace),
    )
    assert code == 0, stderr
    assert payload["succeeded"] is True, payload
    assert payload["termination"] == "success"
    assert check_answer(parse_numbers(PUZZLE), payload["answer"]) is None
    calls = model_calls(trace)
    assert 1 <= payload["calls"] == len(calls) <= 40
    assert payload["tokens"] > 0
    assert_grammar_mode(calls)


def test_plan_through_the_server(server: LlamaServerProcess) -> None:
    budget = 4
    code, payload, stderr = invoke(
        "plan",
        "--problem",
        "ops-disk-full",
        "--budget-calls",
        str(budget),
        "--json",
        "--quiet",
        "--model",
        server.spec(),
    )
    assert code in (0, 1), stderr
    assert payload["termination"] in {"success", "budget_exhausted", "all_pruned"}
    assert 1 <= payload["calls"] <= budget
    assert payload["tree"], "the search judged at least one node"
    assert all(node["passed"] or node["feedback"] for node in payload["tree"])
    assert (code == 0) == payload["succeeded"]


def check_research(payload: dict[str, Any]) -> AgentResponse:
    response = AgentResponse.model_validate(payload)
    assert "seurat" in response.final_answer.lower(), response.final_answer
    cited = [s for s in response.sources if s.id in response.citations.verified]
    assert any("Grande Jatte" in s.title for s in cited), response.sources
    return response


def test_research_through_the_server(server: LlamaServerProcess) -> None:
    code, payload, stderr = invoke(
        "research",
        QUESTION,
        "--json",
        "--quiet",
        "--max-iters",
        "1",
        "--model",
        server.spec(),
    )
    assert code == 0, stderr
    response = check_research(payload)
    assert response.usage is not None and response.usage.total_tokens > 0


def test_find_and_probe_through_the_server(server: LlamaServerProcess) -> None:
    code, found, stderr = invoke(
        "find",
        "paintings by Spanish painters",
        "--min",
        "1",
        "--max-attempts",
        "1",
        "--json",
        "--quiet",
        "--model",
        server.spec(),
    )
    assert code in (0, 1), stderr
    assert found["items"], found
    assert all(item["title"] and item["description"] for item in found["items"])
    assert found["calls"] >= 1

    code, probed, stderr = invoke(
        "probe",
        "French painters",
        "--outer-calls",
        "2",
        "--json",
        "--quiet",
        "--model",
        server.spec(),
    )
    assert code == 0, stderr
    assert 1 <= probed["llm_calls"] <= 2
    assert any("painter" in r["description"].lower() for r in probed["results"])


@pytest.fixture
def service(server: LlamaServerProcess, tmp_path: Path) -> Iterator[str]:
    """`guardsearch serve --model openai:...` in its own process."""
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])),
    }
    command = [sys.executable, "-c", "from guardsearch.cli import main; main()", "serve"]
    command += ["--port", str(port), "--model", server.spec(), "--log-level", "warning"]
    with (tmp_path / "serve.log").open("wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=log, cwd=tmp_path)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert process.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        process.wait(15)


def test_serve_answers_run_and_solve_through_the_server(service: str) -> None:
    with httpx.Client(base_url=service, timeout=300) as client:
        run = client.post("/run", json={"task": QUESTION, "max_iters": 1})
        assert run.status_code == 200, run.text
        check_research(run.json())
        solved = client.post(
            "/solve", json={"problem": {"numbers": PUZZLE}, "budget": {"calls": 40}}
        )
    assert solved.status_code == 200, solved.text
    body = solved.json()
    assert body["succeeded"] is True, body
    assert check_answer(parse_numbers(PUZZLE), body["answer"]) is None
    assert body["model"] == "qwen"
    assert 1 <= body["calls"] <= 40


@dataclass
class Paid(WrapperModel):
    """Counts the calls that reached the server, by request digest; `after(total)` runs
    after each."""

    paid: dict[str, int] = field(default_factory=dict)
    after: Callable[[int], None] | None = None

    async def complete(self, request: ModelRequest) -> Completion:
        completion = await self.inner.complete(request)
        self.paid[request.digest()] = self.paid.get(request.digest(), 0) + 1
        if self.after is not None:
            self.after(sum(self.paid.values()))
        return completion


async def test_a_durable_run_survives_the_server_dying_mid_run(
    server: LlamaServerProcess, tmp_path: Path
) -> None:
    spec = RunSpec(
        app="game24",
        problem={"numbers": PUZZLE},
        strategy="astar",
        model=server.spec("attempts=2&connect_timeout=2"),
        budget={"calls": 40},
    )
    store = SqliteRunStore(tmp_path / "runs.db")
    paid: dict[str, int] = {}

    def kill_after_first(total: int) -> None:
        if total == 1:
            server.kill()  # the first answer is in; the next call finds no server

    try:
        run = create_run(spec, store).id
        inner = model_from_spec(spec.model)
        broken = await execute_run(run, store, model=Paid(inner, paid, kill_after_first))
        await inner.aclose()  # type: ignore[attr-defined]
        assert (broken.status, broken.termination) == ("failed", "model_error")
        assert f"127.0.0.1:{server.port}" in (broken.error or "")
        assert broken.calls == 1 and len(store.calls(run)) == 1  # the paid answer is kept

        server.start()  # back on the same port
        inner = model_from_spec(spec.model)
        resumed = await execute_run(run, store, model=Paid(inner, paid))
        await inner.aclose()  # type: ignore[attr-defined]
        assert resumed.status == "succeeded", resumed
        assert set(paid.values()) == {1}, "a resumed run paid for a call twice"
        assert resumed.calls == sum(paid.values()) == len(store.calls(run))
        answer = (resumed.result or {})["answer"]
        assert check_answer(parse_numbers(PUZZLE), answer) is None
    finally:
        store.close()
