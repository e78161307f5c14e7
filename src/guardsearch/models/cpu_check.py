"""Which llama.cpp settings run on this CPU, found once per machine by a child process.

llama.cpp moves a model's weights into "extra buffer types" when it loads them: the
AMX buffer on Intel Xeons with AMX (Sapphire Rapids and later) and CPU repack layouts
elsewhere. On AMX machines that path can segfault in `llama_decode` on the first token
(llama.cpp issue #20824, closed without a fix; DSPy's CI hit the same crash and dropped
the AMX runner, stanfordnlp/dspy PR #10079). Turning extra buffer types off
(`llama_model_params.use_extra_bufts = false`) avoids it.

A segfault cannot be caught in-process, so before a model is first loaded on a machine
a child process (`python -m guardsearch.models.cpu_canary`) loads it and decodes a few
tokens with the fast settings. If the child dies from a signal, the safe settings are
tried the same way. The choice is recorded under `$GUARDSEARCH_HOME/llama-settings.json`
per CPU, llama-cpp-python version and model file, and reused without a second check.
If no setting decodes, `LlamaCrash` names the CPU flags and the upstream issue.

Forcing: the spec option `?extra_bufts=on|off` (e.g. `embedded?extra_bufts=off`) or the
environment variable `GUARDSEARCH_LLAMA_EXTRA_BUFTS=on|off|auto`; the spec wins.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from guardsearch import paths
from guardsearch.core.errors import ConfigError, ModelError

EXTRA_BUFTS_ENV = "GUARDSEARCH_LLAMA_EXTRA_BUFTS"
RECORD_FILE = "llama-settings.json"
UPSTREAM_ISSUE = "https://github.com/ggml-org/llama.cpp/issues/20824"
CANARY_TIMEOUT_S = 600.0
MODES = ("auto", "on", "off")

# The CPU features llama.cpp picks kernels by: what makes two machines differ for it.
_RELEVANT_FLAGS = (
    "avx",
    "avx2",
    "avx_vnni",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512_vnni",
    "avx512_bf16",
    "amx_tile",
    "amx_int8",
    "amx_bf16",
    "f16c",
    "fma",
    "asimd",
    "asimddp",
    "sve",
    "sve2",
    "i8mm",
)


class LlamaCrash(ModelError):
    """llama.cpp dies on this CPU with every setting guardsearch knows."""


@dataclass(frozen=True, kw_only=True)
class LlamaSettings:
    """The llama.cpp load settings in use for one model file, and why."""

    extra_bufts: bool
    # spec | env | recorded | canary
    source: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CanaryResult:
    """How a canary child ended: its exit code (negative = killed by that signal)."""

    returncode: int
    stderr_tail: str = ""

    @property
    def signal_name(self) -> str | None:
        if self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"


# A canary decodes a few tokens of `model_path` with extra buffer types on or off.
Canary = Callable[[Path, bool], CanaryResult]


def run_model_child(
    module: str, model_path: Path, extra_bufts: bool, *, what: str, timeout: float
) -> subprocess.CompletedProcess[str]:
    """`python -m MODULE MODEL.gguf on|off` in a child process (a llama.cpp crash ends only
    the child), its output captured; a ModelError naming `what` if it outlasts `timeout`."""
    command = [sys.executable, "-m", module, str(model_path), "on" if extra_bufts else "off"]
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ModelError(f"{what} of {model_path.name} did not finish in {timeout:.0f} s") from exc


def stderr_tail(done: subprocess.CompletedProcess[str]) -> str:
    """The last three lines a child wrote to stderr, on one line."""
    return " | ".join(done.stderr.strip().splitlines()[-3:])


def run_canary(model_path: Path, extra_bufts: bool) -> CanaryResult:
    """Load `model_path` in a child process and decode a few tokens (the real check)."""
    done = run_model_child(
        "guardsearch.models.cpu_canary",
        model_path,
        extra_bufts,
        what="the llama.cpp check",
        timeout=CANARY_TIMEOUT_S,
    )
    return CanaryResult(done.returncode, stderr_tail(done))


def parse_mode(value: str | None, *, origin: str) -> str:
    """`on`, `off` or `auto` from a spec option or the environment; anything else is an error."""
    mode = (value or "auto").strip().lower()
    aliases = {"1": "on", "true": "on", "yes": "on", "0": "off", "false": "off", "no": "off"}
    mode = aliases.get(mode, mode)
    if mode not in MODES:
        raise ConfigError(f"{origin}: extra_bufts must be on, off or auto, got {value!r}")
    return mode


def resolve_settings(
    model_path: Path,
    *,
    requested: str | None = None,
    canary: Canary | None = None,
    notify: Callable[[str], None] | None = None,
) -> LlamaSettings:
    """The settings to load `model_path` with: forced, recorded, or found by the canary."""
    if requested is not None and parse_mode(requested, origin="model spec") != "auto":
        on = parse_mode(requested, origin="model spec") == "on"
        return LlamaSettings(extra_bufts=on, source="spec", reason="set in the model spec")
    env = os.environ.get(EXTRA_BUFTS_ENV)
    if env and parse_mode(env, origin=EXTRA_BUFTS_ENV) != "auto":
        on = parse_mode(env, origin=EXTRA_BUFTS_ENV) == "on"
        return LlamaSettings(extra_bufts=on, source="env", reason=f"set by {EXTRA_BUFTS_ENV}")
    recorded = recorded_settings(model_path)
    if recorded is not None:
        return recorded
    return check_settings(model_path, canary=canary, notify=notify)


def check_settings(
    model_path: Path,
    *,
    canary: Canary | None = None,
    notify: Callable[[str], None] | None = None,
) -> LlamaSettings:
    """Run the canary now (fast settings first, then safe), record and return the choice.

    On a CPU that reports AMX the fast settings are not tried: the upstream crash is
    machine-dependent, so a canary that survives a few tokens proves little there.
    """
    say = notify or _stderr
    canary = canary or run_canary  # looked up per call, so it can be replaced in tests
    amx = "amx_int8" in cpu_flags()
    candidates = (False,) if amx else (True, False)
    deaths: list[str] = []
    with _check_lock:
        for extra_bufts in candidates:
            result = canary(model_path, extra_bufts)
            if result.returncode == 0:
                return _chose(model_path, extra_bufts, deaths, amx=amx, say=say)
            if result.signal_name is None:
                raise ModelError(
                    f"llama.cpp could not run {model_path.name} "
                    f"(exit {result.returncode}): {result.stderr_tail or 'no message'}"
                )
            deaths.append(f"{result.signal_name} with extra_bufts={_word(extra_bufts)}")
    raise LlamaCrash(
        f"llama.cpp crashes on this CPU ({cpu_summary()}): {'; '.join(deaths)}; "
        f"see {UPSTREAM_ISSUE}"
    )


def _chose(
    model_path: Path, extra_bufts: bool, deaths: list[str], *, amx: bool, say: Callable[[str], None]
) -> LlamaSettings:
    if extra_bufts:
        reason = "a child process decoded with extra buffer types on"
    elif amx:
        reason = (
            f"the CPU reports AMX, whose llama.cpp path can segfault ({UPSTREAM_ISSUE}); "
            "a child process decoded without extra buffer types"
        )
    else:
        reason = (
            f"llama.cpp died of {deaths[0]} on this CPU ({cpu_summary()}; see "
            f"{UPSTREAM_ISSUE}); a child process decoded without extra buffer types"
        )
    settings = LlamaSettings(extra_bufts=extra_bufts, source="canary", reason=reason)
    path = _record(model_path, settings)
    if not extra_bufts:
        cause = "it reports AMX" if amx else f"llama.cpp crashed ({deaths[0]})"
        say(
            f"guardsearch: using extra_bufts=off for {model_path.name} on this CPU because "
            f"{cause}; recorded in {path} (force with {EXTRA_BUFTS_ENV}=on|off)"
        )
    return settings


def _word(on: bool) -> str:
    return "on" if on else "off"


def recorded_settings(model_path: Path) -> LlamaSettings | None:
    """The settings recorded for this CPU, llama-cpp-python and model file, if any."""
    entry = read_machine_records(RECORD_FILE).get(machine_key(model_path))
    if not isinstance(entry, dict) or not isinstance(entry.get("extra_bufts"), bool):
        return None
    return LlamaSettings(
        extra_bufts=entry["extra_bufts"],
        source="recorded",
        reason=f"{entry.get('reason', '')} (checked {entry.get('checked', '?')})",
    )


def machine_key(model_path: Path) -> str:
    """One key per CPU model and flags, llama-cpp-python version and model file."""
    try:
        size = model_path.stat().st_size
    except OSError:
        size = -1
    parts = {
        "machine": platform.machine(),
        "cpu": cpu_model(),
        "flags": sorted(cpu_flags() & set(_RELEVANT_FLAGS)),
        "llama_cpp": llama_cpp_version(),
        "model": str(model_path.resolve()),
        "size": size,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:24]


def cpu_flags() -> set[str]:
    """The CPU's feature flags as Linux reports them (empty where /proc/cpuinfo is absent)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("flags", "Features"):
                return set(value.split())
    return set()


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "CPU part"):
                return value.strip()
    return platform.processor() or platform.machine()


def cpu_summary() -> str:
    """The CPU model and the flags that matter to llama.cpp, in one short phrase."""
    flags = [f for f in _RELEVANT_FLAGS if f in cpu_flags()]
    return f"{cpu_model()}; {' '.join(flags) or 'no SIMD flags reported'}"


def llama_cpp_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("llama-cpp-python")
    except Exception:
        return None


def settings_status(model_path: Path) -> dict[str, Any]:
    """What `guardsearch models --json` shows: the settings a load would use now, and why."""
    env = os.environ.get(EXTRA_BUFTS_ENV)
    if env and parse_mode(env, origin=EXTRA_BUFTS_ENV) != "auto":
        return resolve_settings(model_path).as_dict() | {"checked": False}
    recorded = recorded_settings(model_path)
    if recorded is not None:
        return recorded.as_dict() | {"checked": True}
    return {
        "extra_bufts": None,
        "source": "unchecked",
        "reason": "not checked on this machine yet: the first use runs a canary "
        "(or run `guardsearch models --check`)",
        "checked": False,
    }


_check_lock = threading.Lock()


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def read_machine_records(name: str) -> dict[str, Any]:
    """A per-machine record file under $GUARDSEARCH_HOME (empty if absent or unreadable)."""
    try:
        data = json.loads((paths.home() / name).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record_for_machine(name: str, model_path: Path, entry: dict[str, Any]) -> Path:
    """Set this machine's entry for `model_path` (`machine_key`) in the record file `name`,
    atomically: write a temp file, then rename it over the old one."""
    target = paths.home() / name
    target.parent.mkdir(parents=True, exist_ok=True)
    records = read_machine_records(name)
    records[machine_key(model_path)] = entry
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(records, handle, indent=2, sort_keys=True)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


def _record(model_path: Path, settings: LlamaSettings) -> Path:
    """Add this machine's choice to the record file."""
    entry = {
        "extra_bufts": settings.extra_bufts,
        "reason": settings.reason,
        "checked": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpu": cpu_summary(),
        "llama_cpp": llama_cpp_version(),
        "model": str(model_path),
    }
    return record_for_machine(RECORD_FILE, model_path, entry)
