"""ModelLadder: a cheap model first, a stronger one when the guards keep rejecting.

A ladder holds two or more models ("rungs"), cheapest first. Each request goes to one
of them, chosen from what the request's `CallInfo` says (the caller's role and how
the guards answered so far at that step or search node), never from hidden state, so
the choice is deterministic, replays, and is the same under concurrency:

- `after=K`: one rung up for every K rejections at the step or node (default 2;
  0 turns it off);
- `repeat=N`: one rung up for every N proposals there that repeated an earlier one
  (default off);
- `on=GUARD|GUARD`: one rung up once a guard of that name has rejected a candidate there;
- `ROLE=N` (propose, judge, repair, code): calls in that role start at rung N
  (1 = the first), e.g. `judge=1` keeps the judge cheap, `code=2` writes code with the
  stronger model from the start.

Spec: `ladder:SPEC,SPEC[?OPTIONS]`, e.g. `ladder:embedded,embedded:1.5b?after=2`. The
options after the last rung are the ladder's; a key the ladder does not take stays
with the last rung (`embedded:1.5b?extra_bufts=off&after=2`).

One budget: the ladder is one model to `Metered`, which books every call against the
one budget and records per call which rung answered and why (`model_call` events
with `rung`, `model_escalation` events; `core.model_usage` sums them per model).

Local models (llama.cpp) in a ladder compute one at a time (two would halve each
other's speed on a small CPU), and with `memory=swap` — or `memory=auto` (default)
when the free RAM would not hold the next model too — the others are unloaded before
one loads, so at most one is in memory. `memory=keep` keeps them all loaded.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from guardsearch.core.digest import stable_digest
from guardsearch.core.errors import ConfigError
from guardsearch.core.messages import CALL_ROLES, Completion, ModelRequest
from guardsearch.models.base import (
    Model,
    Route,
    bound_prompt_tokens,
    enforces_schema,
    estimate_prompt_tokens,
)

Memory = Literal["auto", "keep", "swap"]
MEMORY_MODES: tuple[Memory, ...] = ("auto", "keep", "swap")
DEFAULT_AFTER = 2
# auto: unload the others when free RAM is under the next model's file size times this,
# plus a margin (llama.cpp maps the weights and adds its KV cache and buffers).
_RAM_FACTOR = 1.25
_RAM_MARGIN = 512 * 1024 * 1024


@runtime_checkable
class LocalModel(Protocol):
    """A model whose weights live in this process and can be let go (`LlamaCppModel`)."""

    @property
    def loaded(self) -> bool: ...

    @property
    def path(self) -> Path: ...

    def unload(self) -> None: ...


def available_ram() -> int | None:
    """Bytes of RAM the kernel says are available (`MemAvailable`), or None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


@dataclass
class ModelLadder:
    """Models cheapest first; each request goes to the rung its `CallInfo` earns.

    `after`, `repeat`, `on` and `roles` are the rules of the module docstring (`roles`
    maps a role to its starting rung, 0-based here). `swaps` counts how often other
    local models were unloaded to make room.
    """

    rungs: Sequence[Model]
    after: int = DEFAULT_AFTER
    repeat: int = 0
    on: frozenset[str] = frozenset()
    roles: Mapping[str, int] = field(default_factory=dict)
    memory: Memory = "auto"
    label: str = ""
    swaps: int = 0
    _locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = field(
        default_factory=weakref.WeakKeyDictionary, repr=False
    )

    def __post_init__(self) -> None:
        self.rungs = tuple(self.rungs)
        if len(self.rungs) < 2:
            raise ConfigError("a model ladder needs at least two models")
        for what, value in (("after", self.after), ("repeat", self.repeat)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"ladder {what} must be a whole number >= 0, got {value!r}")
        if self.memory not in MEMORY_MODES:
            raise ConfigError(f"ladder memory must be one of {', '.join(MEMORY_MODES)}")
        self.on = frozenset(self.on)
        for role, rung in self.roles.items():
            if role not in CALL_ROLES:
                raise ConfigError(f"unknown call role {role!r}; roles: {', '.join(CALL_ROLES)}")
            if not 0 <= rung < len(self.rungs):
                raise ConfigError(
                    f"ladder {role}={rung + 1}: there are models 1 to {len(self.rungs)}"
                )

    @property
    def name(self) -> str:
        return self.label or "ladder:" + ",".join(m.name for m in self.rungs)

    @property
    def price_prompt_per_mtok(self) -> float:
        # The dearest rung: what a caller that does not route must reserve.
        return max(float(getattr(m, "price_prompt_per_mtok", 0.0) or 0.0) for m in self.rungs)

    @property
    def price_completion_per_mtok(self) -> float:
        return max(float(getattr(m, "price_completion_per_mtok", 0.0) or 0.0) for m in self.rungs)

    @property
    def constrained_decoding(self) -> bool:
        """Every rung decodes under the request's schema (then so does the ladder, and
        an output it returns cannot break the schema's constraints)."""
        return all(enforces_schema(m) for m in self.rungs)

    # -- routing ---------------------------------------------------------------------

    def route(self, request: ModelRequest) -> Route:
        """The rung that answers `request`, and what escalated it there."""
        call = request.call
        start = self.roles.get(call.role, 0)
        climbs, reasons = 0, []
        if self.after and call.rejections >= self.after:
            climbs = call.rejections // self.after
            reasons.append(f"{call.rejections} rejections")
        if self.repeat and call.repeats >= self.repeat:
            climbs = max(climbs, call.repeats // self.repeat)
            reasons.append(f"{call.repeats} repeats")
        named = sorted(self.on.intersection(call.verdicts))
        if named:
            climbs = max(climbs, 1)
            reasons.append(f"rejected by {', '.join(named)}")
        index = min(len(self.rungs) - 1, start + climbs)
        reason = "; ".join(reasons) if index > start else ""
        return Route(self.rungs[index], index, start, reason)

    def request_digest(self, request: ModelRequest) -> str:
        """The request's digest, with the model's name when a rung above the first answers."""
        route = self.route(request)
        if route.index == 0:
            return request.digest()
        return stable_digest([request.digest(), route.model.name])

    def count_tokens(self, request: ModelRequest) -> int:
        model = self.route(request).model
        if isinstance(model, LocalModel) and not model.loaded and self.memory != "keep":
            # Counting exactly would load the weights ahead of `complete`, possibly
            # beside another model: the byte bound needs no model.
            return bound_prompt_tokens(request)
        return estimate_prompt_tokens(model, request)

    # -- calls -----------------------------------------------------------------------

    def _lock(self) -> asyncio.Lock:
        # asyncio.Lock binds to the loop it first waits on: one per loop (like llamacpp).
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock

    def _make_room(self, model: LocalModel) -> None:
        """Unload the other local rungs before `model` runs, if the memory mode says so.

        `swap` keeps one local model in memory whatever loaded them (the rungs are cached
        per process, so another ladder or step may have loaded both); `auto` frees memory
        only when `model` still has to load and the free RAM would not hold it."""
        if self.memory == "keep":
            return
        others = [m for m in self.rungs if isinstance(m, LocalModel) and m is not model]
        others = [m for m in others if m.loaded]
        if not others:
            return
        if self.memory == "auto":
            if model.loaded:
                return
            free = available_ram()
            try:
                need = model.path.stat().st_size * _RAM_FACTOR + _RAM_MARGIN
            except OSError:
                need = 0
            if free is not None and free >= need:
                return
        for other in others:
            other.unload()
        self.swaps += 1

    async def complete(self, request: ModelRequest) -> Completion:
        route = self.route(request)
        model = route.model
        if isinstance(model, LocalModel):
            async with self._lock():  # local rungs compute one at a time
                self._make_room(model)
                completion = await model.complete(request)
        else:
            completion = await model.complete(request)
        return completion if completion.model else replace(completion, model=model.name)


# -- specs ---------------------------------------------------------------------------

_RULE_KEYS = ("after", "repeat", "on", "memory")
LADDER_KEYS = (*_RULE_KEYS, *CALL_ROLES)


def _whole(spec: str, key: str, value: str, low: int = 0) -> int:
    try:
        number = int(value)
    except ValueError:
        number = low - 1
    if number < low:
        raise ConfigError(f"ladder option {key}={value!r} in {spec!r}: a whole number >= {low}")
    return number


def ladder_options(spec: str, query: str, rungs: int) -> tuple[dict[str, Any], str]:
    """The ladder's options in `query` as `ModelLadder` keywords, and the rest of the
    query (the options of the last rung)."""
    options: dict[str, Any] = {}
    roles: dict[str, int] = {}
    rest: list[str] = []
    for pair in filter(None, query.split("&")):
        key, sep, value = pair.partition("=")
        if key not in LADDER_KEYS:
            rest.append(pair)
            continue
        if not sep or not value:
            raise ConfigError(f"ladder option {key!r} in {spec!r} needs a value ({key}=...)")
        if key in ("after", "repeat"):
            options[key] = _whole(spec, key, value)
        elif key == "on":
            options["on"] = frozenset(filter(None, value.split("|")))
        elif key == "memory":
            if value not in MEMORY_MODES:
                raise ConfigError(
                    f"ladder memory={value!r} in {spec!r}: use {', '.join(MEMORY_MODES)}"
                )
            options["memory"] = value
        else:
            rung = _whole(spec, key, value, low=1)
            if rung > rungs:
                raise ConfigError(f"ladder {key}={rung} in {spec!r}: there are {rungs} models")
            roles[key] = rung - 1
    if roles:
        options["roles"] = roles
    return options, "&".join(rest)


def split_ladder(spec: str, rest: str) -> tuple[list[str], dict[str, Any]]:
    """The rung specs and ladder options of `ladder:REST` (`spec` is the whole spec)."""
    parts = [p.strip() for p in rest.split(",")]
    if len(parts) < 2 or not all(parts):
        raise ConfigError(
            f"a ladder names two or more models, cheapest first: "
            f"ladder:SPEC,SPEC[?after=K], got {spec!r}"
        )
    last, sep, query = parts[-1].partition("?")
    options: dict[str, Any] = {}
    if sep:
        options, own = ladder_options(spec, query, len(parts))
        parts[-1] = f"{last}?{own}" if own else last
    if any(p.startswith("ladder") for p in parts):
        raise ConfigError(f"a ladder's models cannot be ladders: {spec!r}")
    return parts, options
