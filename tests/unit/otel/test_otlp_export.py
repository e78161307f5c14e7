"""Real exports: `guardsearch solve game24` with an OTLP endpoint in its environment sends
its spans to a receiver on 127.0.0.1; without one, opentelemetry is never imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from otlp_receiver import otlp_receiver

OTEL_VARS = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_SDK_DISABLED",
    "GUARDSEARCH_OTEL_IN_PROCESS",
)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in OTEL_VARS}
    env["PYTHONPATH"] = str(Path(__file__).parents[3] / "src")
    env.update(extra)
    return env


def run_python(args: list[str], env: dict[str, str]) -> str:
    """`python ARGS` in `env`; its output (it must succeed)."""
    done = subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _solve(env: dict[str, str], *args: str, timeout: float = 120) -> dict:  # type: ignore[type-arg]
    command = [sys.executable, "-m", "guardsearch", "solve", "game24", "4 5 6 10", "--json"]
    done = subprocess.run(
        [*command, "--quiet", *args], env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _scripted(tmp_path: Path) -> str:
    path = tmp_path / "answers.json"
    steps = (["5 * 6"], ["30 - 10"], ["4 + 20"])
    path.write_text(json.dumps([json.dumps({"steps": s}) for s in steps]))
    return f"scripted:{path}"


def _check_tree(spans: list[dict], payload: dict) -> None:  # type: ignore[type-arg]
    runs = [s for s in spans if s["name"] == "invoke_workflow search"]
    assert len(runs) == 1
    run = runs[0]
    assert run["parent_id"] == ""
    assert run["resource"]["service.name"] == "guardsearch"
    assert run["scope"] == "guardsearch"
    assert run["attributes"]["guardsearch.stop_reason"] == "success"
    assert {s["trace_id"] for s in spans} == {run["trace_id"]}
    calls = [s for s in spans if s["name"].startswith("chat ")]
    assert len(calls) == payload["calls"]
    tokens = sum(
        c["attributes"]["gen_ai.usage.input_tokens"] + c["attributes"]["gen_ai.usage.output_tokens"]
        for c in calls
    )
    assert tokens == payload["tokens"]
    expansions = {s["span_id"] for s in spans if s["name"].startswith("expansion ")}
    assert len(expansions) == payload["expansions"]
    assert all(c["parent_id"] in expansions for c in calls)
    verdicts = [s for s in spans if s["name"].startswith("guard ")]
    assert len(verdicts) == payload["nodes"] - 1


def test_an_endpoint_in_the_environment_sends_the_runs_spans(tmp_path: Path) -> None:
    with otlp_receiver() as (url, received):
        payload = _solve(
            _env(OTEL_EXPORTER_OTLP_ENDPOINT=url), "--model", _scripted(tmp_path), timeout=60
        )
        spans = received.spans()
    assert payload["succeeded"]
    _check_tree(spans, payload)


def test_without_an_endpoint_nothing_of_opentelemetry_is_imported(tmp_path: Path) -> None:
    code = f"""
import asyncio, json, sys
from guardsearch import Trace, model_from_spec
from guardsearch.apps.game24 import solve_game24
trace = Trace()
out = asyncio.run(solve_game24("4 5 6 10", model=model_from_spec({_scripted(tmp_path)!r}),
                               trace=trace))
assert out["succeeded"]
assert not trace.record_content and not trace.of_kind("note")
loaded = sorted(m for m in sys.modules if m.startswith("opentelemetry"))
# FastAPI (0.165 and later) imports the OpenTelemetry API itself; guardsearch adds nothing.
from guardsearch.server.app import create_app
create_app(model=model_from_spec({_scripted(tmp_path)!r}))
ours = sorted(m for m in sys.modules if m.startswith(("opentelemetry.sdk", "guardsearch.otel.")))
print(json.dumps([loaded, ours]))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [[], []]


@pytest.mark.model
def test_a_real_embedded_model_run_reaches_the_receiver() -> None:
    pytest.importorskip("llama_cpp")
    with otlp_receiver() as (url, received):
        payload = _solve(_env(OTEL_EXPORTER_OTLP_ENDPOINT=url), timeout=900)
        spans = received.spans()
    assert payload["succeeded"], payload
    _check_tree(spans, payload)
    call = next(s for s in spans if s["name"].startswith("chat "))
    assert call["attributes"]["gen_ai.provider.name"] == "llamacpp"
    assert call["attributes"]["gen_ai.request.model"] == payload["model"]
    assert call["attributes"]["gen_ai.usage.output_tokens"] > 0


SERVE = """
import asyncio, sys
import httpx
from opentelemetry import trace
from research_script import QUESTION, Painting, research_model
from guardsearch.loops.research import ResearchConfig
from guardsearch.server import create_app

async def main() -> None:
    app = create_app(model=research_model(), providers=[Painting()], config=ResearchConfig())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        headers = {"traceparent": sys.argv[1]}
        response = await client.post("/run", json={"task": QUESTION}, headers=headers)
        assert response.status_code == 200, response.text
    trace.get_tracer_provider().force_flush()

asyncio.run(main())
"""


def test_a_served_run_joins_the_callers_trace_with_an_endpoint_in_the_environment(
    tmp_path: Path,
) -> None:
    """`OTEL_EXPORTER_OTLP_ENDPOINT=... guardsearch serve`: the process-wide provider, so
    FastAPI (0.165+) makes the request's span itself; the run hangs under it."""
    caller_trace, caller_span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    script = tmp_path / "serve.py"
    script.write_text(SERVE)
    env = _env(GUARDSEARCH_HOME=str(tmp_path / "home"))
    env["PYTHONPATH"] += os.pathsep + str(Path(__file__).parent)
    with otlp_receiver() as (url, received):
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = url
        run_python([str(script), f"00-{caller_trace}-{caller_span}-01"], env)
        spans = received.spans()
    by_id = {s["span_id"]: s for s in spans}
    (run,) = [s for s in spans if s["name"] == "invoke_workflow research"]
    assert run["trace_id"] == caller_trace
    chain, span = [], run
    while span["parent_id"] in by_id:
        span = by_id[span["parent_id"]]
        chain.append(span["name"])
    assert span["parent_id"] == caller_span  # the top of the chain is the caller's child
    assert "POST /run" in chain or span["name"].startswith("POST")
    assert any(
        s["attributes"].get("guardsearch.run.id") == run["attributes"]["guardsearch.run.id"]
        for s in spans
        if s is not run
    )
