"""A local model's speed and RAM, measured by a child process, recorded per machine and
shown by `guardsearch models` (the real child runs in the model suite)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from guardsearch.cli import app
from guardsearch.core.errors import ModelError
from guardsearch.models import cpu_check, speed

FIGURES = {"load_s": 0.5, "prompt_tokens": 300, "read_tps": 250.0, "written_tokens": 64,
           "write_tps": 40.0, "threads": 2, "peak_rss_mb": 640.0}  # fmt: skip


@pytest.fixture
def gguf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv(cpu_check.EXTRA_BUFTS_ENV, "off")  # no canary: the setting is given
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 60)
    return path


def test_a_measurement_is_recorded_for_this_machine_and_read_back(gguf: Path) -> None:
    asked: list[tuple[Path, bool]] = []

    def child(path: Path, extra_bufts: bool) -> dict[str, Any]:
        asked.append((path, extra_bufts))
        return dict(FIGURES)

    assert speed.recorded(gguf) is None
    figures = speed.measure(gguf, runner=child)
    assert asked == [(gguf, False)]  # the llama.cpp setting chosen for this CPU
    assert figures["write_tps"] == 40.0 and figures["extra_bufts"] is False
    again = speed.recorded(gguf)
    assert again is not None and again["peak_rss_mb"] == 640.0 and again["model"] == str(gguf)
    assert speed.describe(again) == (
        "250 tok/s reading, 40.0 tok/s writing, 2 threads, peak RSS 640 MB, load 0.5 s"
    )
    gguf.write_bytes(b"GGUF" + b"\0" * 61)  # another model file: not measured yet
    assert speed.recorded(gguf) is None


def test_a_child_that_fails_is_a_clear_error_and_records_nothing(gguf: Path) -> None:
    with pytest.raises(ModelError, match=r"measuring tiny.gguf failed \(exit 1\)"):
        speed.measure(gguf)  # the real child: llama.cpp cannot load 64 bytes of zeros
    assert speed.recorded(gguf) is None


def test_models_shows_what_is_recorded_and_how_to_measure(
    gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from guardsearch.models import embedded

    status = {"name": "tiny", "spec": "embedded:0.5b", "extra": "embedded", "path": str(gguf),
              "size": 64, "installed": True, "assembled": True}  # fmt: skip
    monkeypatch.setattr(embedded, "embedded_status", lambda info: dict(status))
    shown = CliRunner().invoke(app, ["models"])
    assert "not measured here (guardsearch models --measure)" in shown.stdout, shown.stdout
    speed.measure(gguf, runner=lambda path, on: dict(FIGURES))
    shown = CliRunner().invoke(app, ["models"])
    assert "40.0 tok/s writing" in shown.stdout and "peak RSS 640 MB" in shown.stdout
    payload = json.loads(CliRunner().invoke(app, ["models", "--json"]).stdout)
    assert payload["embedded"]["speed"]["read_tps"] == 250.0
