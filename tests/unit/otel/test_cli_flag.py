"""`guardsearch --otel ...` turns tracing on; without the extra it says how to get it."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from span_tree import SpanTree
from typer.testing import CliRunner

from guardsearch import otel
from guardsearch.cli import app
from guardsearch.otel import setup

runner = CliRunner()


def _answers(tmp_path: Path) -> str:
    path = tmp_path / "answers.json"
    steps = (["5 * 6"], ["30 - 10"], ["4 + 20"])
    path.write_text(json.dumps([json.dumps({"steps": s}) for s in steps]))
    return f"scripted:{path}"


@pytest.fixture
def off() -> Iterator[None]:
    otel.disable()
    yield
    otel.disable()


def test_the_otel_flag_traces_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, off: None
) -> None:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    monkeypatch.setattr(setup, "default_provider", lambda: provider)
    monkeypatch.setenv(otel.IN_PROCESS_ENV, "1")  # the export process: test_otlp_export.py
    args = ["--otel", "solve", "game24", "4 5 6 10", "--model", _answers(tmp_path), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.stderr
    assert otel.enabled()
    payload = json.loads(result.stdout)
    (run,) = SpanTree(memory.get_finished_spans()).roots()
    assert run.name == "invoke_workflow search"
    assert run.attributes["guardsearch.expansions"] == payload["expansions"]


def _hide_opentelemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(sys.modules):
        if name.startswith(("opentelemetry", "guardsearch.otel.")):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "opentelemetry", None)


def test_the_otel_flag_without_the_extra_is_a_one_line_error(
    monkeypatch: pytest.MonkeyPatch, off: None
) -> None:
    _hide_opentelemetry(monkeypatch)
    result = runner.invoke(app, ["--otel", "apps"])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and "pip install 'guardsearch[otel]'" in line
    assert not otel.enabled()


def test_an_endpoint_without_the_extra_warns_and_runs_untraced(
    monkeypatch: pytest.MonkeyPatch, off: None
) -> None:
    _hide_opentelemetry(monkeypatch)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    with pytest.warns(RuntimeWarning, match="no traces: .*guardsearch\\[otel\\]"):
        assert otel.enable_from_env() is False
    assert not otel.enabled()
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert otel.enable_from_env() is False  # disabled: not even a warning
