"""Which llama.cpp settings a machine uses: the canary child, the fallback and the record.

The canaries here are real child processes that exit normally or kill themselves with
SIGSEGV, so the signal handling is the real one; no llama.cpp is loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from guardsearch.core.errors import ConfigError, ModelError
from guardsearch.models import cpu_check
from guardsearch.models.cpu_check import CanaryResult, LlamaCrash, resolve_settings
from guardsearch.models.spec import model_from_spec

_SEGFAULT = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"


class Canaries:
    """A canary that crashes (SIGSEGV) for the settings in `crash_with`; records its calls."""

    def __init__(self, *, crash_with: tuple[bool, ...] = (), exit_code: int = 0) -> None:
        self.crash_with = crash_with
        self.exit_code = exit_code
        self.calls: list[bool] = []

    def __call__(self, model_path: Path, extra_bufts: bool) -> CanaryResult:
        self.calls.append(extra_bufts)
        crash = extra_bufts in self.crash_with
        code = _SEGFAULT if crash else f"raise SystemExit({self.exit_code})"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, check=False)
        return CanaryResult(done.returncode, done.stderr.decode()[-200:])


@pytest.fixture
def gguf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GUARDSEARCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv(cpu_check.EXTRA_BUFTS_ENV, raising=False)
    monkeypatch.setattr(cpu_check, "cpu_flags", lambda: {"avx", "avx2", "fma", "f16c"})
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 60)
    return path


def test_a_crashing_fast_canary_falls_back_to_safe_settings_and_says_so_once(gguf: Path) -> None:
    canary, said = Canaries(crash_with=(True,)), []
    settings = resolve_settings(gguf, canary=canary, notify=said.append)
    assert canary.calls == [True, False]
    assert settings.extra_bufts is False and settings.source == "canary"
    assert "SIGSEGV" in settings.reason and cpu_check.UPSTREAM_ISSUE in settings.reason
    assert len(said) == 1 and "\n" not in said[0] and "extra_bufts=off" in said[0]


def test_the_recorded_choice_is_reused_without_a_second_canary(gguf: Path) -> None:
    resolve_settings(gguf, canary=Canaries(crash_with=(True,)), notify=lambda _: None)
    again, said = Canaries(), []
    settings = resolve_settings(gguf, canary=again, notify=said.append)
    assert again.calls == [] and said == []
    assert settings.extra_bufts is False and settings.source == "recorded"
    record = json.loads((Path(cpu_check.paths.home()) / cpu_check.RECORD_FILE).read_text())
    (entry,) = record.values()
    assert entry["extra_bufts"] is False and entry["model"] == str(gguf)


def test_a_healthy_cpu_keeps_the_fast_settings_silently(gguf: Path) -> None:
    canary, said = Canaries(), []
    settings = resolve_settings(gguf, canary=canary, notify=said.append)
    assert canary.calls == [True] and said == []
    assert settings.extra_bufts is True


def test_a_cpu_with_amx_goes_straight_to_the_safe_settings(
    gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cpu_check, "cpu_flags", lambda: {"avx512f", "amx_tile", "amx_int8"})
    canary, said = Canaries(), []
    settings = resolve_settings(gguf, canary=canary, notify=said.append)
    assert canary.calls == [False]
    assert settings.extra_bufts is False and "AMX" in settings.reason
    assert len(said) == 1 and "AMX" in said[0]


def test_when_every_setting_crashes_the_error_names_the_cpu_flags_and_upstream(
    gguf: Path,
) -> None:
    with pytest.raises(LlamaCrash) as caught:
        resolve_settings(gguf, canary=Canaries(crash_with=(True, False)), notify=lambda _: None)
    message = str(caught.value)
    assert "\n" not in message and "avx2" in message and cpu_check.UPSTREAM_ISSUE in message
    assert isinstance(caught.value, ModelError)  # the CLI exits 1, not 139
    assert not (Path(cpu_check.paths.home()) / cpu_check.RECORD_FILE).exists()


def test_a_child_that_fails_without_a_signal_is_not_taken_for_a_cpu_problem(gguf: Path) -> None:
    canary = Canaries(exit_code=3)
    with pytest.raises(ModelError, match="exit 3") as caught:
        resolve_settings(gguf, canary=canary)
    assert not isinstance(caught.value, LlamaCrash)
    assert canary.calls == [True]


@pytest.mark.parametrize(("value", "expected"), [("off", False), ("on", True), ("0", False)])
def test_the_environment_forces_a_setting_without_a_canary(
    gguf: Path, monkeypatch: pytest.MonkeyPatch, value: str, expected: bool
) -> None:
    monkeypatch.setenv(cpu_check.EXTRA_BUFTS_ENV, value)
    canary = Canaries()
    settings = resolve_settings(gguf, canary=canary)
    assert canary.calls == [] and settings.extra_bufts is expected and settings.source == "env"


def test_the_spec_option_wins_over_the_environment(
    gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(cpu_check.EXTRA_BUFTS_ENV, "on")
    settings = resolve_settings(gguf, requested="off", canary=Canaries())
    assert settings.extra_bufts is False and settings.source == "spec"


def test_a_bad_setting_is_a_config_error(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cpu_check.EXTRA_BUFTS_ENV, "sometimes")
    with pytest.raises(ConfigError, match="on, off or auto"):
        resolve_settings(gguf, canary=Canaries())


def test_local_model_specs_take_the_option_after_a_question_mark(gguf: Path) -> None:
    pytest.importorskip("llama_cpp")
    model = model_from_spec(f"gguf:{gguf}?extra_bufts=off")
    assert getattr(model, "extra_bufts", None) == "off"
    with pytest.raises(ConfigError, match="extra_bufts"):
        model_from_spec(f"gguf:{gguf}?threads=3")
    with pytest.raises(ConfigError, match="on, off or auto"):
        model_from_spec(f"gguf:{gguf}?extra_bufts=maybe")


def test_status_says_unchecked_until_a_canary_ran(gguf: Path) -> None:
    assert cpu_check.settings_status(gguf)["source"] == "unchecked"
    resolve_settings(gguf, canary=Canaries(), notify=lambda _: None)
    status = cpu_check.settings_status(gguf)
    assert status["checked"] is True and status["extra_bufts"] is True


def test_the_cli_exits_1_with_one_line_when_llama_cpp_crashes_everywhere(
    gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("llama_cpp")
    from typer.testing import CliRunner

    from guardsearch.cli import app
    from guardsearch.models.base import allow_real_models

    canary = Canaries(crash_with=(True, False))
    monkeypatch.setattr(cpu_check, "run_canary", canary)
    allow_real_models(True)
    try:
        result = CliRunner().invoke(app, ["ask", "hi", "--model", f"gguf:{gguf}"])
    finally:
        allow_real_models(False)
    assert result.exit_code == 1, result.output
    assert canary.calls == [True, False]
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "crashes on this CPU" in lines[0]
    assert cpu_check.UPSTREAM_ISSUE in lines[0]
