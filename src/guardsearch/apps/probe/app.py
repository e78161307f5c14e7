"""The `probe` app: topic -> corpus results, by the inner/outer loop or by the baseline.

- probe (default): run_adaptive with the ModelPlanner (plan, evaluate, optional
  replan) around the CorpusProbePolicy over one-call beams of ProbeQueries;
- baseline: the same planner writes one query (its keywords and the topic's words),
  one ordinary BM25 search returns the results, the planner evaluates them; no
  inner loop. Both return at most `max_results` results and report both budgets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from guardsearch.apps.probe.planner import ModelPlanner
from guardsearch.apps.probe.policy import CorpusProbePolicy
from guardsearch.apps.probe.prober import CorpusProber
from guardsearch.core.budget import BudgetLike
from guardsearch.core.errors import ConfigError
from guardsearch.core.events import Trace
from guardsearch.core.source import Source
from guardsearch.core.usage import Usage
from guardsearch.corpus.index import CorpusIndex
from guardsearch.loops.inner_outer import (
    ControlBudget,
    Evaluation,
    PolicySettings,
    ProbePlan,
    Timeline,
    run_adaptive,
)
from guardsearch.loops.inner_outer.budget import DEFAULT_INNER_PROBES, DEFAULT_OUTER_CALLS
from guardsearch.loops.kernel import Kernel, Stop
from guardsearch.models.base import Model


@dataclass(kw_only=True)
class ProbeRun:
    topic: str
    mode: str
    results: list[Source]
    plans: list[ProbePlan]
    evaluation: Evaluation | None
    budget: ControlBudget
    trace: Trace = field(repr=False)
    seconds: float
    stop_reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def llm_calls(self) -> int:
        return self.budget.outer_used

    @property
    def probe_calls(self) -> int:
        return self.budget.probes_used

    @property
    def timeline(self) -> Timeline:
        return Timeline.from_trace(self.trace)

    def as_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "mode": self.mode,
            "results": [
                {"title": h.title, "description": h.description, "location": h.location}
                for h in self.results
            ],
            "plans": [
                {"terms": list(p.terms), "pool": list(p.pool), "kind": p.kind, "source": p.source}
                for p in self.plans
            ],
            "evaluation": (
                {"satisfied": self.evaluation.satisfied, "reason": self.evaluation.reason}
                if self.evaluation
                else None
            ),
            "stop_reasons": self.stop_reasons,
            "llm_calls": self.llm_calls,
            "probe_calls": self.probe_calls,
            "budget": self.budget.as_dict(),
            "timeline": self.timeline.as_list(),
            "notes": self.notes,
            "seconds": round(self.seconds, 3),
        }


def _index(index: CorpusIndex | None) -> CorpusIndex:
    if index is not None:
        return index
    from guardsearch.corpus import open_index

    return open_index()


async def probe(
    topic: str,
    *,
    model: Model,
    index: CorpusIndex | None = None,
    baseline: bool = False,
    budget: BudgetLike = DEFAULT_OUTER_CALLS,
    inner_budget: BudgetLike = DEFAULT_INNER_PROBES,
    settings: PolicySettings | None = None,
    trace: Trace | None = None,
    max_results: int = 10,
) -> ProbeRun:
    """Search the corpus for `topic` with the inner/outer loop (or the baseline), within
    `budget` model calls and `inner_budget` probe calls (anything `Budget.of` takes)."""
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
    return ProbeRun(
        topic=topic,
        mode="probe",
        results=result.results,
        plans=result.plans,
        evaluation=result.evaluation,
        budget=result.budget,
        trace=events,
        seconds=result.seconds,
        stop_reasons=[o.stop_reason for o in result.inner],
        notes=result.notes,
    )


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

    def event(layer: str, phase: str, **data: Any) -> None:
        kernel.phase(phase, layer=layer, **data)

    event("outer", "plan", status="start")
    try:
        plan = await kernel.attempt("plan", planner.plan(topic, kernel.metered))
        event("outer", "plan", status="done", outer_used=control.outer_used)
    except Stop as stop:
        notes.append(f"plan failed: {stop.error}")
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
            event("outer", "evaluate", status="done", outer_used=control.outer_used)
        except Stop as stop:
            notes.append(f"evaluate failed: {stop.error}")
    fields = kernel.finish(
        "single_search", layer="outer", results=len(results), budget=control.as_dict()
    )
    return ProbeRun(
        topic=topic,
        mode="baseline",
        results=results,
        plans=[plan],
        evaluation=evaluation,
        budget=control,
        trace=trace,
        seconds=fields["seconds"],
        stop_reasons=["single_search"],
        notes=notes,
    )
