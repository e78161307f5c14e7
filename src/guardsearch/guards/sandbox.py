"""Run model-written functions in a separate, confined process (never in ours).

A `Sandbox` is one child process (guards/sandbox_runner.py) that loads one module and
then answers calls in batches: a whole test suite, or a whole level of a search, costs
one round trip, not one process per input. The operating system confines the child
(guards/isolation.py: bubblewrap namespaces, a read-only root of its own, no network, a
seccomp filter; or, where the user opted in, process limits only); the child caps its
CPU time (`RLIMIT_CPU`), address space (`RLIMIT_AS`), processes (`RLIMIT_NPROC`) and
file writes (`RLIMIT_FSIZE`); this side enforces a wall-clock deadline per batch and
kills the child when it passes. Each call's `CallOutcome` says which of five things
happened: `ok` (a value), `exception` (the function raised), `hang` (CPU or wall-clock
limit: the process was killed), `crash` (the process died another way), `bad_output`
(the reply broke the protocol, e.g. `{"$q": [1, 0]}`: read defensively, never an
exception on this side).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

from guardsearch.guards.code import ALLOWED_IMPORTS
from guardsearch.guards.isolation import child_command, ensure_isolation

RUNNER = Path(__file__).with_name("sandbox_runner.py")
CallKind = Literal["ok", "exception", "hang", "crash", "bad_output"]
_LINE_LIMIT = 4_000_000
_MAX_DEPTH = 200  # the child sends at most 50 levels
_REPR_CHARS = 2_000


@dataclass(frozen=True, kw_only=True)
class Limits:
    """What one sandboxed process may use: CPU seconds (its whole life), memory (MB of
    address space), wall-clock seconds per batch of calls, and the modules it may import."""

    cpu_seconds: int = 20
    memory_mb: int = 512
    wall_seconds: float = 10.0
    allowed: frozenset[str] = ALLOWED_IMPORTS
    # The child's Python-level layers (restricted builtins, module views, the audit
    # hook). Off only in the tests that show the OS confinement holds on its own.
    python_guards: bool = True


@dataclass(frozen=True)
class CallOutcome:
    """What one call did: `kind`, the value it returned (`ok`) or the error text."""

    kind: CallKind
    value: Any = None
    error: str = ""


def encode(value: Any) -> Any:
    """A value as the child reads it (tuples and lists as arrays, Fractions tagged)."""
    if isinstance(value, Fraction):
        return {"$q": [value.numerator, value.denominator]}
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    return value


class BadOutput(ValueError):
    """The child's reply is not what the protocol allows (a broken or hostile child)."""


def decode(value: Any, depth: int = 0) -> Any:
    """A value the child sent back (arrays as lists, `$q` as Fraction, `$repr` kept).
    BadOutput for anything the protocol does not allow: a `$q` that is no fraction
    (`{"$q": [1, 0]}`), nesting past the child's own limit."""
    if depth > _MAX_DEPTH:
        raise BadOutput("the value is nested too deeply")
    if isinstance(value, list):
        return [decode(v, depth + 1) for v in value]
    if isinstance(value, dict):
        if "$q" in value and len(value) == 1:
            return _fraction(value["$q"])
        if "$repr" in value and len(value) == 1:
            return Unrepresentable(str(value["$repr"])[:_REPR_CHARS])
        return {k: decode(v, depth + 1) for k, v in value.items()}
    return value


def _fraction(parts: Any) -> Fraction:
    ok = (
        isinstance(parts, list)
        and len(parts) == 2
        and all(isinstance(p, int) and not isinstance(p, bool) for p in parts)
        and parts[1] != 0
    )
    if not ok:
        raise BadOutput(f"{{'$q': {str(parts)[:60]}}} is not a fraction")
    return Fraction(parts[0], parts[1])


def parse_reply(raw: bytes) -> CallOutcome:
    """One line of the child's reply as an outcome: `ok`, `exception`, or `bad_output`
    when the line is not a reply the protocol allows (never an exception here)."""
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        return CallOutcome("bad_output", error=f"the reply is not JSON ({str(exc)[:80]})")
    if not isinstance(message, dict):
        return CallOutcome("bad_output", error="the reply is not a JSON object")
    if message.get("ok") is True:
        try:
            return CallOutcome("ok", value=decode(message.get("value")))
        except (BadOutput, RecursionError, ValueError, TypeError) as exc:
            return CallOutcome("bad_output", error=str(exc) or type(exc).__name__)
    return CallOutcome("exception", error=str(message.get("error", ""))[:_REPR_CHARS])


@dataclass(frozen=True)
class Unrepresentable:
    """A returned value the child could not send as data; `text` is its repr."""

    text: str

    def __repr__(self) -> str:
        return self.text


class Sandbox:
    """One confined child process running one module; use as `async with Sandbox(...)`.

    `loaded` is the outcome of loading the module (`ok`, or why it failed). After a
    `hang` or `crash` the process is gone: later calls come back as that outcome too.
    `network_cut` says whether the child runs in a network namespace of its own (no
    network at all) or only behind the allowlist (docs/security.md). With `mutable`,
    arrays arrive as lists and every call of the module's own functions gets a deep copy
    of its arguments (code may change a state it is given; see sandbox_runner.py);
    otherwise arrays arrive as tuples.
    """

    def __init__(self, source: str, limits: Limits | None = None, *, mutable: bool = False) -> None:
        self.source = source
        self.limits = limits or Limits()
        self.mutable = mutable
        self.loaded: CallOutcome = CallOutcome("crash", error="not started")
        self._proc: asyncio.subprocess.Process | None = None
        self._dir: str | None = None
        self._dead: CallOutcome | None = None

    async def __aenter__(self) -> Sandbox:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> CallOutcome:
        """Start the child and load the module. Raises IsolationUnavailable where the OS
        cannot confine the child (guards/isolation.py) and the user did not opt out."""
        limits = self.limits
        # The first check starts a confined child (bwrap's probe): off the event loop.
        mode = await asyncio.to_thread(ensure_isolation)
        args = [str(limits.cpu_seconds), str(limits.memory_mb * 1024 * 1024),
                ",".join(sorted(limits.allowed)), mode,
                "guards" if limits.python_guards else "bare"]  # fmt: skip
        self._dir = tempfile.mkdtemp(prefix="gs-sandbox-")
        with child_command(RUNNER, args, mode) as (argv, fds):
            self._proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={"PATH": os.defpath, "LC_ALL": "C.UTF-8"},  # no inherited secrets
                cwd=self._dir,
                limit=_LINE_LIMIT,
                start_new_session=True,
                pass_fds=fds,
            )
        header: dict[str, Any] = {"source": self.source}
        if self.mutable:
            header["mutable"] = True
        [self.loaded] = await self._exchange([header])
        if self.loaded.kind == "exception":
            self.loaded = CallOutcome("exception", error=f"loading the module: {self.loaded.error}")
        return self.loaded

    @property
    def network_cut(self) -> bool:
        value = self.loaded.value
        return isinstance(value, dict) and value.get("network") == "cut"

    async def call(self, fn: str, *args: Any) -> CallOutcome:
        [out] = await self.call_many([(fn, args)])
        return out

    async def call_many(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[CallOutcome]:
        """Each (function name, arguments) in one batch, under one wall-clock deadline."""
        if self.loaded.kind != "ok":
            return [self._dead or self.loaded for _ in calls]
        return await self._exchange([{"fn": fn, "args": encode(list(a))} for fn, a in calls])

    async def _exchange(self, lines: list[dict[str, Any]]) -> list[CallOutcome]:
        proc = self._proc
        if self._dead is not None or proc is None or proc.stdin is None or proc.stdout is None:
            return [self._dead or CallOutcome("crash", error="the sandbox is not running")] * len(
                lines
            )
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # reading says how
            proc.stdin.write("".join(json.dumps(m) + "\n" for m in lines).encode())
        out: list[CallOutcome] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limits.wall_seconds
        while len(out) < len(lines):
            try:
                raw = await asyncio.wait_for(proc.stdout.readline(), deadline - loop.time())
            except TimeoutError:
                self._dead = CallOutcome(
                    "hang", error=f"no answer within {self.limits.wall_seconds:g} s (killed)"
                )
                await self._kill()
                break
            except ValueError:  # a line over the limit
                self._dead = CallOutcome("crash", error="the answer was too large")
                await self._kill()
                break
            if not raw:
                self._dead = await self._death()
                break
            out.append(parse_reply(raw))
        return out + [self._dead or CallOutcome("crash")] * (len(lines) - len(out))

    async def _death(self) -> CallOutcome:
        proc = self._proc
        assert proc is not None
        code = await proc.wait()
        err = (await proc.stderr.read()).decode(errors="replace")[-300:] if proc.stderr else ""
        if code > 128:  # bubblewrap passes a child's death by signal N on as 128 + N
            code = 128 - code
        if code in (-signal.SIGXCPU, -signal.SIGKILL):
            limit = self.limits.cpu_seconds
            return CallOutcome("hang", error=f"used up its {limit} s of CPU time (killed)")
        if "MemoryError" in err:
            return CallOutcome("crash", error=f"ran out of memory ({self.limits.memory_mb} MB)")
        why = f"signal {-code}" if code < 0 else f"exit status {code}"
        return CallOutcome("crash", error=f"the process died ({why}) {err.strip()}".strip())

    async def _kill(self) -> None:
        proc = self._proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()

    async def close(self) -> None:
        proc = self._proc
        if proc is not None:
            if proc.stdin is not None and not proc.stdin.is_closing():
                proc.stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), 2)
            except TimeoutError:
                await self._kill()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
