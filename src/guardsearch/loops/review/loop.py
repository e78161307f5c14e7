"""The plan/act/review loop (docs/review.md): reflect -> act -> review -> refine and retry.

    plan once: a reflection block (plan, assumptions, risks, success criteria) + a spec
    repeat:
        act: run the tools for the spec (no model calls)
        review: verify each new candidate (rules, then a model judge) -> QualityReport
        stop when quality meets the domain's threshold and enough items are verified
        otherwise choose a refinement: one that raised quality in earlier runs of the
        domain first (the shared history), else escalation gives this run's levels
        (keywords -> sources -> replan), the app offers refinements per level, the
        history ranks them
        check the budget for one more attempt *before* spending; apply; retry
    answer with what was verified, with caveats when quality stayed low

The run kernel (kernel.py) is the run's shell: every phase is a `phase` event
(step "review"), model calls go through its Metered, and a run error (a plan or replan
that failed, a budget that ran out mid-call) ends the run with the kernel's stop reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic

from guardsearch.core.budget import Budget, BudgetLike
from guardsearch.core.errors import BudgetExceeded
from guardsearch.core.events import Trace
from guardsearch.core.source import Source
from guardsearch.core.usage import Usage
from guardsearch.kernel import Kernel, Stop
from guardsearch.loops.review.config import DEFAULT_BUDGET_CALLS, ReviewConfig
from guardsearch.loops.review.history import RefinementHistory
from guardsearch.loops.review.history_file import open_history, save_history
from guardsearch.loops.review.quality import (
    Level,
    QualityReport,
    Refinement,
    Verdict,
    quality_report,
)
from guardsearch.loops.review.reflection import Reflection
from guardsearch.loops.review.run import AttemptRecord, ReviewRun
from guardsearch.loops.review.task import ReviewTask, SpecT
from guardsearch.models.base import Model


def _largest(usages: Sequence[Usage]) -> Usage:
    return Usage(
        calls=max((u.calls for u in usages), default=0),
        prompt_tokens=max((u.prompt_tokens for u in usages), default=0),
        completion_tokens=max((u.completion_tokens for u in usages), default=0),
    )


@dataclass
class ReviewLoop(Generic[SpecT]):
    """Runs a `ReviewTask` under one budget; `history` may be shared across runs (each
    run gets its own id in it: escalation is per run, the learned gains are shared)."""

    task: ReviewTask[SpecT]
    model: Model
    config: ReviewConfig = field(default_factory=ReviewConfig)
    history: RefinementHistory = field(default_factory=RefinementHistory)

    async def run(
        self,
        request: str,
        *,
        budget: BudgetLike = DEFAULT_BUDGET_CALLS,
        min_items: int | None = None,
        trace: Trace | None = None,
    ) -> ReviewRun:
        """Review `request` within `budget` (anything `Budget.of` takes; 40 calls)."""
        kernel = Kernel("review", self.model, Budget.of(budget), trace=trace)
        return await _RunState(self, kernel, request, min_items or self.config.min_items).run()


async def review(
    request: str,
    task: ReviewTask[SpecT],
    *,
    model: Model,
    budget: BudgetLike = DEFAULT_BUDGET_CALLS,
    trace: Trace | None = None,
    config: ReviewConfig | None = None,
    history: str | Path | RefinementHistory | None = None,
    min_items: int | None = None,
) -> ReviewRun:
    """Review `request` with `task` within `budget` (anything `Budget.of` takes).

    `history` is what earlier runs learned about refinements: a JSON file (loaded before
    the run, the run merged into it after; a broken file is a ConfigError and is left
    alone) or a `RefinementHistory` shared in memory.
    """
    shared, path = open_history(history)
    loop = ReviewLoop(task, model, config or ReviewConfig(), shared)
    run = await loop.run(request, budget=budget, min_items=min_items, trace=trace)
    if path is not None:
        save_history(shared, path, run=run.history_run)
    return run


class _RunState(Generic[SpecT]):
    def __init__(self, loop: ReviewLoop[SpecT], kernel: Kernel, request: str, min_items: int):
        self.task = loop.task
        self.config = loop.config
        self.history = loop.history
        self.kernel = kernel
        self.metered = kernel.metered
        # The run's number in the refinement history (escalation is per run).
        self.history_run = loop.history.begin_run()
        self.learned: Refinement | None = None
        self.request = request
        self.min_items = min_items
        self.reflection: Reflection | None = None
        self.domain = "general"
        self.threshold = self.config.thresholds.default
        self.attempts: list[AttemptRecord] = []
        self.verdicts: dict[str, Verdict] = {}
        self.accepted: dict[str, Source] = {}
        self.plan_cost = Usage(calls=1)
        self.error = ""

    def phase(self, phase: str, **data: Any) -> None:
        self.kernel.phase(phase, **data)

    async def run(self) -> ReviewRun:
        self.phase("start", request=self.request, min_items=self.min_items)
        try:
            planned = await self.kernel.attempt("plan", self.task.plan(self.request, self.metered))
        except Stop as stop:
            self.error = f"plan failed: {stop.error}"
            return self.finish(stop.reason)
        self.plan_cost = self.metered.usage  # a replan costs about what the plan did
        self.reflection = planned.reflection
        self.domain = planned.domain
        self.threshold = self.config.thresholds.for_domain(planned.domain)
        self.phase(
            "planned",
            reflection=planned.reflection.model_dump(),
            domain=self.domain,
            threshold=self.threshold,
            spec=self.task.describe(planned.spec),
        )
        return await self.attempt_loop(planned.spec)

    async def attempt_loop(self, spec: SpecT) -> ReviewRun:
        applied: Refinement | None = None
        for number in range(1, self.config.max_attempts + 1):
            try:
                record = await self.attempt(number, spec, applied)
            except Stop as stop:
                if isinstance(stop.error, BudgetExceeded):
                    self.phase("budget_stop", attempt=number, reason=stop.error.reason)
                return self.finish(stop.reason)
            report = record.report
            if report.meets_threshold and len(self.accepted) >= self.min_items:
                return self.finish("threshold_met")
            refinement = report.suggested_refinement
            if refinement is None:
                return self.finish("no_refinement")
            if number == self.config.max_attempts:
                return self.finish("max_iterations")
            if not self.can_afford(refinement):
                return self.finish("budget_exhausted")
            try:
                spec = await self.kernel.attempt("refine", self.refine(spec, refinement))
            except Stop as stop:
                if not isinstance(stop.error, BudgetExceeded):
                    self.phase("replan_failed", error=str(stop.error))
                return self.finish(stop.reason)
            self.history.applied(
                number,
                refinement,
                report.quality_score,
                run=self.history_run,
                domain=self.domain,
                learned=self.is_learned(refinement),
            )
            applied = refinement
        return self.finish("max_iterations")  # pragma: no cover - the loop always returns

    async def attempt(self, number: int, spec: SpecT, applied: Refinement | None) -> AttemptRecord:
        began, usage_before = self.kernel.elapsed(), self.metered.usage
        self.phase("act", attempt=number, spec=self.task.describe(spec))
        candidates = _unique(await self.task.act(spec))
        fresh = [c for c in candidates if c.key not in self.verdicts]
        judged = await self.kernel.attempt("review", self.task.verify(fresh, spec, self.metered))
        for verdict in judged:
            self.verdicts[verdict.key] = verdict
        verdicts = [self.verdicts[c.key] for c in candidates if c.key in self.verdicts]
        report = quality_report(verdicts, self.threshold)
        if applied is not None:
            self.history.outcome(report.quality_score, run=self.history_run)
        newly = [c for c in candidates if self.verdicts[c.key].accepted]
        for candidate in newly:
            self.accepted.setdefault(candidate.key, candidate)
        enough = report.meets_threshold and len(self.accepted) >= self.min_items
        if not enough:
            refinement = self.choose(report, verdicts, candidates, spec)
            report = report.model_copy(update={"suggested_refinement": refinement})
        record = AttemptRecord(
            number=number,
            spec=self.task.describe(spec),
            applied=applied,
            report=report,
            accepted=[c.key for c in newly],
            usage=self.metered.usage - usage_before,
            seconds=self.kernel.elapsed() - began,
        )
        self.attempts.append(record)
        self.phase("reviewed", attempt=number, quality_report=report.model_dump())
        return record

    def choose(
        self,
        report: QualityReport,
        verdicts: Sequence[Verdict],
        candidates: Sequence[Source],
        spec: SpecT,
    ) -> Refinement | None:
        """Learned first: an offer (at any level the run may still use) whose kind raised
        quality in earlier runs of this domain; else the escalation order of this run,
        each level's offers ranked by the history."""
        escalation = self.config.escalation
        mine = self.history.of_run(self.history_run)
        offers: dict[Level, list[Refinement]] = {}

        def offered(level: Level) -> list[Refinement]:
            if level not in offers:
                offers[level] = self.task.suggest(
                    level, report, verdicts, candidates, spec, self.history
                )
            return offers[level]

        levels = escalation.levels(mine)
        self.learned = None
        everything = [r for level in escalation.allowed(mine) for r in offered(level)]
        proven = self.history.proven(
            everything, run=self.history_run, domain=self.domain, min_gain=escalation.min_gain
        )
        if proven:
            # a pick at the level escalation would try first anyway is not a jump
            if not levels or proven[0].level != levels[0]:
                self.learned = proven[0]
            return proven[0]
        for level in levels:
            ranked = self.history.rank(offered(level), run=self.history_run, domain=self.domain)
            if ranked:
                return ranked[0]
        return None

    def is_learned(self, refinement: Refinement) -> bool:
        """Was `refinement` picked from earlier runs' gains, out of the escalation order?"""
        return self.learned is not None and refinement == self.learned

    def can_afford(self, refinement: Refinement) -> bool:
        """Cost-aware retry: the next attempt may cost as much as the dearest one so far
        (plus a replan call); refuse it before spending if that could break the budget."""
        estimate = _largest([a.usage for a in self.attempts])
        if refinement.level == "replan":
            estimate = estimate + self.plan_cost
        budget = self.metered.budget
        if budget.affords(estimate):
            return True
        self.phase("budget_stop", reason=budget.violation(estimate), estimate=estimate.as_dict())
        return False

    async def refine(self, spec: SpecT, refinement: Refinement) -> SpecT:
        self.phase(
            "refine",
            level=refinement.level,
            learned=self.is_learned(refinement),
            refinement=refinement.model_dump(),
        )
        if refinement.level == "replan":
            reports = [a.report for a in self.attempts]
            return await self.task.replan(self.request, spec, reports, self.metered)
        return self.task.apply(spec, refinement)

    def finish(self, stop_reason: str) -> ReviewRun:
        items = list(self.accepted.values())
        caveats = self.caveats(stop_reason, items)
        fields = self.kernel.finish(stop_reason, items=len(items), caveats=caveats)
        return ReviewRun(
            **fields,
            succeeded=not self.error and bool(items),
            request=self.request,
            reflection=self.reflection,
            domain=self.domain,
            threshold=self.threshold,
            attempts=self.attempts,
            items=items,
            caveats=caveats,
            answer=compose_answer(self.request, items, caveats),
            history=self.history,
            history_run=self.history_run,
            error=self.error,
        )

    def caveats(self, stop_reason: str, items: Sequence[Source]) -> list[str]:
        notes: list[str] = []
        if self.error:
            notes.append(self.error)
        last = self.attempts[-1].report if self.attempts else None
        if last is not None and not last.meets_threshold:
            notes.append(
                f"Quality stayed below the {self.domain} threshold: "
                f"{last.quality_score:.0%} < {last.threshold:.0%} "
                f"({last.verified} of {last.total_fetched} verified in the last attempt)."
            )
        if len(items) < self.min_items:
            notes.append(
                f"Only {len(items)} of the {self.min_items} requested items were verified."
            )
        if stop_reason in ("budget_exhausted", "deadline"):
            notes.append("The budget ran out before another attempt could be paid for.")
        elif stop_reason == "no_refinement" and notes:
            notes.append("No untried refinement was left to improve the results.")
        elif stop_reason == "max_iterations" and notes:
            notes.append(f"Stopped after {len(self.attempts)} attempts.")
        return notes


def _unique(candidates: Sequence[Source]) -> list[Source]:
    seen: dict[str, Source] = {}
    for candidate in candidates:
        seen.setdefault(candidate.key, candidate)
    return list(seen.values())


def compose_answer(request: str, items: Sequence[Source], caveats: Sequence[str]) -> str:
    """The answer: verified items only, then the caveats (never a silent low-quality list)."""
    if items:
        lines = [f"Found {len(items)} verified item(s) for: {request}"]
        for item in items:
            about = f" ({item.description})" if item.description else ""
            lines.append(f"- {item.title}{about}")
    else:
        lines = [f"No item could be verified for: {request}"]
    if caveats:
        lines.append("Caveats:")
        lines += [f"- {c}" for c in caveats]
    return "\n".join(lines)
