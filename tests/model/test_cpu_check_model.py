"""The real canary and launcher on this machine's CPU, with the embedded model."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from guardsearch.models import cpu_check

pytestmark = pytest.mark.model
pytest.importorskip("llama_cpp")


@pytest.fixture
def embedded_gguf() -> Path:
    from guardsearch.models.embedded import embedded_model_path

    return embedded_model_path()


def test_the_real_canary_decodes_with_the_safe_settings(embedded_gguf: Path) -> None:
    # Safe settings must decode on every CPU; the fast ones are this machine's business.
    assert cpu_check.run_canary(embedded_gguf, False).returncode == 0


def test_models_check_records_a_choice_that_the_next_load_reuses(
    embedded_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path))
    monkeypatch.delenv(cpu_check.EXTRA_BUFTS_ENV, raising=False)
    checked = cpu_check.check_settings(embedded_gguf, notify=lambda _: None)
    assert checked.source == "canary"
    reused = cpu_check.resolve_settings(embedded_gguf, canary=_no_canary)
    assert reused.source == "recorded" and reused.extra_bufts == checked.extra_bufts


def _no_canary(path: Path, extra_bufts: bool) -> cpu_check.CanaryResult:
    raise AssertionError("the recorded choice should have been reused")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def llama_server(tmp_path: Path) -> Iterator[str]:
    pytest.importorskip("llama_cpp.server.app")
    port = _free_port()
    command = [sys.executable, "-m", "guardsearch.models.llama_server", "--model", "embedded"]
    options = ["--model_alias", "qwen", "--host", "127.0.0.1", "--port", str(port)]
    log = tmp_path / "server.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [*command, *options, "--n_ctx", "1024"], stdout=sink, stderr=subprocess.STDOUT
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"llama server exited {proc.returncode}: {log.read_text()[-500:]}")
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            pytest.fail(f"llama server did not come up in 300 s: {log.read_text()[-500:]}")
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_launcher_serves_the_embedded_model_with_the_settings_that_work(
    llama_server: str,
) -> None:
    reply = httpx.post(
        f"{llama_server}/chat/completions",
        json={
            "model": "qwen",
            "messages": [{"role": "user", "content": "What is 2 + 3? Answer with a number."}],
            "max_tokens": 8,
            "temperature": 0,
        },
        timeout=120,
    )
    assert reply.status_code == 200, reply.text
    assert "5" in json.dumps(reply.json()["choices"][0]["message"]["content"])


def test_models_measure_times_the_real_model_in_a_child(
    embedded_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from guardsearch.models import speed

    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path))
    monkeypatch.setenv(cpu_check.EXTRA_BUFTS_ENV, "off")  # the setting every CPU decodes
    figures = speed.measure(embedded_gguf)
    assert figures["written_tokens"] == speed.WRITE_TOKENS  # the list goes on, no early stop
    assert figures["prompt_tokens"] > 200 and figures["read_tps"] > 0 < figures["write_tps"]
    # the 0.5B's weights are 0.49 GB: a child that loaded them holds at least that much
    assert 400 < figures["peak_rss_mb"] < 4000
    assert speed.recorded(embedded_gguf) == figures | {"model": str(embedded_gguf)}
