"""One trial: a method on a problem, under a budget, with a fresh metered model.

`run_trial` is the unit every executor runs (in this process or in a Ray worker); it
takes and returns plain data, so a trial can travel anywhere and be stored as JSON.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from guardsearch.core.budget import Budget
from guardsearch.core.errors import BudgetExceeded
from guardsearch.core.events import Subscriber, Trace
from guardsearch.core.model_usage import model_usage
from guardsearch.core.steering import Steering
from guardsearch.experiments.suite import MethodSpec, Problem, resolve_suite
from guardsearch.models.base import Model
from guardsearch.models.metered import Metered
from guardsearch.models.spec import model_from_spec

_MODELS: dict[str, Model] = {}


@dataclass(frozen=True)
class TrialSpec:
    """What to run: everything a worker needs, as plain data."""

    suite: str
    problem: Problem
    method: MethodSpec
    trial: int
    budget: int | None
    model: str

    @property
    def key(self) -> str:
        return trial_key(self.problem.id, self.method.label, self.trial, self.budget)

    @property
    def config(self) -> dict[str, Any]:
        """What decides the outcome besides the problem, trial and budget."""
        return trial_config(self.suite, self.model, self.method)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.config)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrialSpec:
        return cls(
            suite=d["suite"],
            problem=Problem(**d["problem"]),
            method=MethodSpec(**d["method"]),
            trial=d["trial"],
            budget=d["budget"],
            model=d["model"],
        )


def trial_key(problem: str, method: str, trial: int, budget: int | None) -> str:
    return f"{problem}|{method}|t{trial}|b{budget if budget is not None else 'inf'}"


def trial_config(suite: str, model: str, method: MethodSpec) -> dict[str, Any]:
    """The configuration a stored trial must share to be reused: suite, model spec,
    the suite's method and its options (the label, problem, trial and budget are in
    the key)."""
    return {"suite": suite, "model": model, "method": method.method, "options": method.options}


def fingerprint(config: dict[str, Any]) -> str:
    """A short stable hash of a trial config (key order does not matter)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def describe_change(old: dict[str, Any] | None, new: dict[str, Any]) -> str:
    """What differs between two trial configs, for people: `model 'a' -> 'b'`."""
    if old is None:
        return "the configuration is unknown"
    changes: list[str] = []
    for field_name in ("suite", "model", "method"):
        if old.get(field_name) != new.get(field_name):
            changes.append(f"{field_name} {old.get(field_name)!r} -> {new.get(field_name)!r}")
    before, after = old.get("options") or {}, new.get("options") or {}
    for name in sorted(set(before) | set(after), key=str):
        if before.get(name, _UNSET) != after.get(name, _UNSET):
            was = repr(before[name]) if name in before else "unset"
            now = repr(after[name]) if name in after else "unset"
            changes.append(f"options.{name} {was} -> {now}")
    return ", ".join(changes) or "the configuration changed"


_UNSET = object()


@dataclass(frozen=True, kw_only=True)
class TrialResult:
    """What one trial did and cost. `detail` holds the suite's extras (path, nodes, ...)."""

    key: str
    problem: str
    method: str
    trial: int
    budget: int | None
    model: str
    succeeded: bool
    termination: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int
    seconds: float
    answer: Any = None
    backtracks: list[int] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)
    # The trial's config (`trial_config`) and its hash; None in trials stored before
    # fingerprints existed (the out directory's manifest then says what they ran with).
    fingerprint: str | None = None
    config: dict[str, Any] | None = None
    # How feedback steered the trial (core/steering.py, from its trace): outputs,
    # repeats, repeat_share, repairs, prevented. Empty in trials stored before it.
    steering: dict[str, Any] = field(default_factory=dict)
    # Per model, when the trial's model was a ladder (`core.model_usage`); None otherwise.
    models: dict[str, dict[str, Any]] | None = None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrialResult:
        return cls(**d)


def model_for(spec: str) -> Model:
    """One model per spec per process (weights load once; a replay log is read once)."""
    if spec not in _MODELS:
        _MODELS[spec] = model_from_spec(spec)
    return _MODELS[spec]


async def run_trial(
    spec: TrialSpec, watch: Subscriber | None = None
) -> tuple[TrialResult, list[dict[str, Any]]]:
    """Run one trial; returns its result and its trace (events as dicts). `watch`
    sees each event as it happens (the run store's live record, `runlog.LiveTrial`)."""
    suite = resolve_suite(spec.suite)
    model = model_for(spec.model)
    trace = Trace()
    if watch is not None:
        trace.subscribe(watch)
    metered = Metered(model, Budget.of(spec.budget), trace)
    started = time.perf_counter()
    try:
        out = await suite.run(spec.method, spec.problem, metered, spec.trial)
    except BudgetExceeded:
        out = {"succeeded": False, "termination": "budget_exhausted"}
    seconds = time.perf_counter() - started
    usage = metered.usage
    extra = {
        k: v
        for k, v in out.items()
        if k not in ("succeeded", "termination", "answer", "backtracks")
    }
    result = TrialResult(
        key=spec.key,
        problem=spec.problem.id,
        method=spec.method.label,
        trial=spec.trial,
        budget=spec.budget,
        model=model.name,
        succeeded=bool(out["succeeded"]),
        termination=str(out["termination"]),
        calls=usage.calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        cached_prompt_tokens=usage.cached_prompt_tokens,
        seconds=round(seconds, 3),
        answer=out.get("answer"),
        backtracks=[int(d) for d in out.get("backtracks", [])],
        detail=extra,
        fingerprint=spec.fingerprint,
        config=spec.config,
        steering=Steering.from_events(metered.trace.events).as_dict(),
        models=model_usage(metered.trace.events) or None,
    )
    return result, [e.as_dict() for e in metered.trace.events]


def run_trial_blocking(spec: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """`run_trial` from plain data to plain data, for executors outside the event loop."""
    result, events = asyncio.run(run_trial(TrialSpec.from_dict(spec)))
    return result.as_dict(), events
