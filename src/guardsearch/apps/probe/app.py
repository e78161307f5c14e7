"""The `probe` app: topic -> corpus results, by the inner/outer loop or by the baseline.

- probe (default): run_adaptive with the ModelPlanner (plan, evaluate, optional
  replan) around the CorpusProbePolicy over one-call beams of ProbeQueries;
- baseline: the same planner writes one query (its keywords and the topic's words),
  one ordinary BM25 search returns the results, the planner evaluates them; no
  inner loop. Both return at most `max_results` results and report both budgets.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from guardsearch.apps.probe.planner import ModelPlanner
from guardsearch.apps.probe.policy import CorpusProbePolicy
from guardsearch.apps.probe.prober import CorpusProber
from guardsearch.core.budget import BudgetLike
from guardsearch.core.errors import ConfigError
from guardsearch.core.events import Trace
from guardsearch.core.usage import Usage
from guardsearch.corpus.index import CorpusIndex
from guardsearch.kernel import Kernel, Stop
from guardsearch.loops.inner_outer import (
    AdaptiveResult,
    ControlBudget,
    PolicySettings,
    run_adaptive,
)
from guardsearch.loops.inner_outer.budget import DEFAULT_INNER_PROBES, DEFAULT_OUTER_CALLS
from guardsearch.loops.inner_outer.runner import unanswered
from guardsearch.models.base import Model


@dataclass(frozen=True, kw_only=True)
class ProbeConfig:
    """How `run_probe` searches: the inner/outer loop or the `baseline` (one
    model-written query), how many results it returns, the probe policy's settings."""

    baseline: bool = False
    max_results: int = 10
    settings: PolicySettings | None = None


@dataclass(frozen=True, kw_only=True)
class ProbeRun(AdaptiveResult):
    """An inner/outer run of the probe app, and its `mode`: "probe" or "baseline" (one
    model-written search; its stop reason is `single_search`)."""

    mode: str

    @classmethod
    def of(cls, result: AdaptiveResult, mode: str) -> ProbeRun:
        return cls(**{f.name: getattr(result, f.name) for f in fields(result)}, mode=mode)

    def details(self) -> dict[str, Any]:
        return {"mode": self.mode, **super().details()}


def _index(index: CorpusIndex | None) -> CorpusIndex:
    if index is not None:
        return index
    from guardsearch.corpus import open_index

    return open_index()


async def probe(
    topic: str,
    *,
    model: Model | str,
    index: CorpusIndex | None = None,
    baseline: bool = False,
    budget: BudgetLike = DEFAULT_OUTER_CALLS,
    inner_budget: BudgetLike = DEFAULT_INNER_PROBES,
    settings: PolicySettings | None = None,
    trace: Trace | None = None,
    max_results: int = 10,
) -> ProbeRun:
    """Search the corpus for `topic` with the inner/outer loop (or the baseline), within
    `budget` model calls and `inner_budget` probe calls (anything `Budget.of` takes).
    `model` is a Model or a spec string ("embedded", docs/models.md)."""
    if isinstance(model, str):
        from guardsearch.models.spec import model_from_spec

        model = model_from_spec(model)
    if not topic.strip():
        raise ConfigError("probe needs a non-empty topic")
    if max_results < 1:
        raise ConfigError(f"max_results must be >= 1, got {max_results}")
    prober = CorpusProber(_index(index), k=max_results)
    planner = ModelPlanner()
    events = trace if trace is not None else Trace()
    if baseline:
        control = ControlBudget.of(budget, inner_budget)
        return await _baseline(topic, model, planner, prober, control, events, max_results)
    result = await run_adaptive(
        topic,
        model=model,
        planner=planner,
        prober=prober,
        policy=CorpusProbePolicy(settings),
        budget=budget,
        inner_budget=inner_budget,
        trace=events,
        max_results=max_results,
    )
    return ProbeRun.of(result, "probe")


async def _baseline(
    topic: str,
    model: Model,
    planner: ModelPlanner,
    prober: CorpusProber,
    control: ControlBudget,
    trace: Trace,
    max_results: int,
) -> ProbeRun:
    kernel = Kernel("inner_outer", model, control.outer, trace=trace)
    notes: list[str] = []
    failures: list[Stop] = []
    answered = 0

    def event(layer: str, phase: str, **data: Any) -> None:
        kernel.phase(phase, layer=layer, **data)

    event("outer", "plan", status="start")
    try:
        plan = await kernel.attempt("plan", planner.plan(topic, kernel.metered))
        answered += 1
        event("outer", "plan", status="done", outer_used=control.outer_used)
    except Stop as stop:
        notes.append(f"plan failed: {stop.error}")
        failures.append(stop)
        plan = planner.fallback(topic)
    query = " ".join(dict.fromkeys([*plan.pool, *plan.terms]))
    control.charge_probe()
    results = await prober.search_text(query, max_results)
    control.charge_step()
    event("inner", "step", index=1, move="search", count=len(results), query=query)
    evaluation = None
    if control.outer.affords(Usage(calls=1)):
        event("outer", "evaluate", status="start")
        try:
            evaluation = await kernel.attempt(
                "evaluate", planner.evaluate(topic, results, kernel.metered)
            )
            answered += 1
            event("outer", "evaluate", status="done", outer_used=control.outer_used)
        except Stop as stop:
            notes.append(f"evaluate failed: {stop.error}")
            failures.append(stop)
    failed = unanswered(failures, answered)
    error = {"error": str(failed.error)} if failed is not None else {}
    shared = kernel.finish(
        failed.reason if failed is not None else "single_search",
        layer="outer",
        results=len(results),
        budget=control.as_dict(),
        **error,
    )
    return ProbeRun(
        **shared,
        error=str(failed.error) if failed is not None else None,
        succeeded=bool(results) and failed is None,
        mode="baseline",
        topic=topic,
        results=results,
        plans=[plan],
        inner=[],
        evaluation=evaluation,
        budget=control,
        notes=notes,
    )
