"""run_adaptive (docs/probe.md): the outer planner around the inner probe loop.

    plan                                   outer call 1 (code fallback if it fails)
    loop:
        conservative = the outer budget is low          (outer -> inner linkage)
        policy = selector.select(plan)
        inner loop: decide -> probe the beam (memo first, the rest in ONE merged call)
                    -> apply -> stop when the termination policy says so
        failure = classifier.classify(stop reason)
        plateau / nothing found and the outer budget can pay a replan and the
        evaluation -> replan and run the inner loop again (inner -> outer linkage)
    evaluate the results                   outer call 2 (or 3)

The run kernel (kernel.py) is the run's shell: every step of both layers is a
`phase` event (step "inner_outer", `layer` outer or inner, `t` seconds); timeline.py
turns them into the dual-layer timeline. A failed planner call is a note, not a stop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from guardsearch.core.budget import BudgetLike
from guardsearch.core.errors import ConfigError
from guardsearch.core.events import Trace
from guardsearch.core.outcome import Outcome
from guardsearch.core.source import Source
from guardsearch.core.usage import Usage
from guardsearch.kernel import Kernel, Stop
from guardsearch.loops.inner_outer.budget import (
    DEFAULT_INNER_PROBES,
    DEFAULT_INNER_STEPS,
    DEFAULT_OUTER_CALLS,
    ControlBudget,
)
from guardsearch.loops.inner_outer.extensions import (
    DefaultTermination,
    FailureClassifier,
    Planner,
    RuleClassifier,
    SingleStrategy,
    StrategySelector,
    TerminationPolicy,
)
from guardsearch.loops.inner_outer.memo import QueryMemo
from guardsearch.loops.inner_outer.plan import Evaluation, Observation, ProbePlan
from guardsearch.loops.inner_outer.policy import BandProbePolicy, ProbePolicy, ProbeState
from guardsearch.loops.inner_outer.scoring import ScoreContext, WeightedScorer
from guardsearch.loops.inner_outer.timeline import Timeline
from guardsearch.models.base import Model
from guardsearch.models.metered import Metered

_STEP = "inner_outer"
T = TypeVar("T")


class Prober(Protocol):
    """Runs a beam of queries in one call (OR-merged), one Observation per query."""

    async def probe(
        self, queries: Sequence[Hashable], keys: Sequence[str]
    ) -> list[Observation]: ...


@dataclass(frozen=True, kw_only=True)
class InnerOutcome:
    plan: ProbePlan
    state: ProbeState
    stop_reason: str
    failure: str


@dataclass(frozen=True, kw_only=True)
class AdaptiveResult(Outcome):
    """One inner/outer run: the ranked results, the plans, each inner loop's outcome, the
    planner's evaluation and both budget layers. `usage` is the outer (model) usage;
    `stop_reason` is why the last inner loop stopped (stable, oscillation, plateau,
    inner_budget, objective_met, ...); it `succeeded` when it found results. A run whose
    model never answered (every planner call failed on a model error: a server that is
    down, a bad key) failed, whatever the code fallback found: its stop reason is
    `model_error` and `error` says why."""

    topic: str
    results: list[Source]
    plans: list[ProbePlan]
    inner: list[InnerOutcome]
    evaluation: Evaluation | None
    budget: ControlBudget = field(repr=False, compare=False)
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def llm_calls(self) -> int:
        return self.budget.outer_used

    @property
    def probe_calls(self) -> int:
        return self.budget.probes_used

    @property
    def stop_reasons(self) -> list[str]:
        """Why each inner loop stopped (the run's own reason when none ran)."""
        return [o.stop_reason for o in self.inner] or [self.stop_reason]

    @property
    def timeline(self) -> Timeline:
        return Timeline.from_trace(self.trace)

    def details(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
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
            **({"error": self.error} if self.error is not None else {}),
        }


def unanswered(failures: Sequence[Stop], answered: int) -> Stop | None:
    """The model error that ended a run's model calls when the model never answered
    (no planner call came back and at least one failed on a model error), else None.

    The loop goes on without a failed planner call (a plan from code, no evaluation);
    that keeps a run going past one bad answer, but a model that never answers at all
    must not pass for a run that worked."""
    if answered:
        return None
    return next((f for f in failures if f.reason == "model_error"), None)


async def run_adaptive(
    topic: str,
    *,
    model: Model,
    planner: Planner,
    prober: Prober,
    policy: ProbePolicy | None = None,
    selector: StrategySelector | None = None,
    budget: BudgetLike = DEFAULT_OUTER_CALLS,
    inner_budget: BudgetLike = DEFAULT_INNER_PROBES,
    inner_steps: int = DEFAULT_INNER_STEPS,
    classifier: FailureClassifier | None = None,
    termination: TerminationPolicy | None = None,
    scorer: WeightedScorer | None = None,
    memo: QueryMemo | None = None,
    trace: Trace | None = None,
    max_replans: int = 1,
    max_results: int = 10,
) -> AdaptiveResult:
    """Plan with the model, probe deterministically, replan on a plateau, evaluate.

    `budget` is the outer (model) budget, `inner_budget` the inner one in probe calls
    (each anything `Budget.of` takes); `inner_steps` caps the inner loop's steps.
    """
    if selector is None:
        if policy is None:
            raise ConfigError("run_adaptive needs a policy or a selector")
        selector = SingleStrategy(policy)
    control = ControlBudget.of(budget, inner_budget, inner_steps=inner_steps)
    run = _Run(
        topic=topic,
        kernel=Kernel(_STEP, model, control.outer, trace=trace),
        planner=planner,
        prober=prober,
        selector=selector,
        budget=control,
        classifier=classifier or RuleClassifier(),
        termination=termination or DefaultTermination(),
        scorer=scorer or WeightedScorer(),
        memo=memo if memo is not None else QueryMemo(),
        max_replans=max_replans,
        max_results=max_results,
    )
    return await run.go()


@dataclass(kw_only=True)
class _Run:
    topic: str
    kernel: Kernel
    planner: Planner
    prober: Prober
    selector: StrategySelector
    budget: ControlBudget
    classifier: FailureClassifier
    termination: TerminationPolicy
    scorer: WeightedScorer
    memo: QueryMemo
    max_replans: int
    max_results: int
    notes: list[str] = field(default_factory=list)
    failures: list[Stop] = field(default_factory=list)
    answered: int = 0

    @property
    def metered(self) -> Metered:
        return self.kernel.metered

    def event(self, layer: str, phase: str, **data: Any) -> None:
        self.kernel.phase(phase, layer=layer, **data)

    async def outer_call(self, phase: str, call: Awaitable[T]) -> T | None:
        """One planner call; on a run error the run goes on without it (noted)."""
        calls_before = self.budget.outer_used
        self.event("outer", phase, status="start", outer_used=calls_before)
        try:
            value = await self.kernel.attempt(phase, call)
        except Stop as stop:
            self.notes.append(f"{phase} failed: {stop.error}")
            self.failures.append(stop)
            self.event("outer", phase, status="failed", error=str(stop.error))
            return None
        self.answered += 1
        self.event("outer", phase, status="done", outer_used=self.budget.outer_used)
        return value

    async def go(self) -> AdaptiveResult:
        plan = await self.outer_call("plan", self.planner.plan(self.topic, self.metered))
        if plan is None:
            plan = self.planner.fallback(self.topic)
        plans, outcomes = [plan], []
        replans = 0
        while True:
            outcome = await self.inner_loop(plan)
            outcomes.append(outcome)
            can_replan = replans < self.max_replans and self.budget.outer_affords()
            if not (self.classifier.wants_replan(outcome.failure) and can_replan):
                break
            self.event("outer", "replan_triggered", failure=outcome.failure)
            new_plan = await self.outer_call(
                "replan",
                self.planner.replan(self.topic, plan, outcome.state, outcome.failure, self.metered),
            )
            replans += 1
            if new_plan is None:
                break
            plan = new_plan
            plans.append(plan)
        results = self.results(outcomes)
        evaluation = None
        if self.budget.outer.affords(Usage(calls=1)):
            evaluation = await self.outer_call(
                "evaluate", self.planner.evaluate(self.topic, results, self.metered)
            )
        failed = unanswered(self.failures, self.answered)
        error = {"error": str(failed.error)} if failed is not None else {}
        fields = self.kernel.finish(
            failed.reason if failed is not None else outcomes[-1].stop_reason,
            layer="outer",
            results=len(results),
            budget=self.budget.as_dict(),
            **error,
        )
        return AdaptiveResult(
            **fields,
            error=str(failed.error) if failed is not None else None,
            succeeded=bool(results) and failed is None,
            topic=self.topic,
            results=results,
            plans=plans,
            inner=outcomes,
            evaluation=evaluation,
            budget=self.budget,
            notes=self.notes,
        )

    def results(self, outcomes: Sequence[InnerOutcome]) -> list[Source]:
        pool: dict[str, Source] = {}
        for outcome in outcomes:
            hits = outcome.state.collected or (
                outcome.state.last.hits if outcome.state.last else ()
            )
            for hit in hits:
                pool.setdefault(hit.key, hit)
        ctx = ScoreContext.of(self.topic, outcomes[-1].plan.kind if outcomes else "")
        return self.scorer.rank(list(pool.values()), ctx)[: self.max_results]

    async def inner_loop(self, plan: ProbePlan) -> InnerOutcome:
        conservative = self.budget.outer_low
        policy = self.selector.select(plan, self.budget)
        state = policy.initialize(plan, conservative=conservative)
        self.event(
            "inner",
            "init",
            conservative=conservative,
            outer_remaining=self.budget.outer.remaining().calls,
            query=policy.normalise(state.query),
            lo=state.band.lo,
            hi=state.band.hi,
        )
        while True:
            reason = self.termination.stop_reason(state, policy, self.budget)
            if reason is not None:
                break
            action = policy.decide(state)
            observations = await self.probe(policy, action.variants)
            if observations is None:
                reason = "inner_budget"
                break
            self.budget.charge_step()
            state = policy.apply(state, action, observations)
            self.event(
                "inner",
                "step",
                index=state.step,
                move=action.move,
                note=action.note,
                variants=[o.key for o in observations],
                counts=[o.count for o in observations],
                memo=[o.from_memo for o in observations],
                chosen=state.last.key if state.last else "",
                count=state.count,
                lo=state.band.lo,
                hi=state.band.hi,
                ema=state.band.ema,
                fitness=round(state.best_fitness, 4),
                probes_used=self.budget.probes_used,
                memo_hits=self.budget.memo_hits,
            )
        failure = self.classifier.classify(reason, state)
        self.event("inner", "stop", reason=reason, failure=failure, steps=state.step)
        return InnerOutcome(plan=plan, state=state, stop_reason=reason, failure=failure)

    async def probe(
        self, policy: ProbePolicy, variants: Sequence[Hashable]
    ) -> list[Observation] | None:
        """Memo first; everything else in one merged probe call (None: no budget for it)."""
        keys = [policy.normalise(v) for v in variants]
        found: dict[str, Observation] = {}
        missing: dict[str, Hashable] = {}
        for key, variant in zip(keys, variants, strict=True):
            if key in found or key in missing:
                continue
            cached = self.memo.get(key)
            if cached is not None:
                found[key] = cached
                self.budget.memo_hits += 1
            else:
                missing[key] = variant
        if missing:
            if not self.budget.inner.affords(Usage(calls=1)):
                return None
            self.budget.charge_probe()
            fresh = await self.prober.probe(list(missing.values()), list(missing))
            for observation in fresh:
                self.memo.put(observation)
                found[observation.key] = observation
        ordered = dict.fromkeys(keys)
        return [found[k] for k in ordered if k in found]


__all__ = [
    "AdaptiveResult",
    "BandProbePolicy",
    "InnerOutcome",
    "Prober",
    "run_adaptive",
]
