"""The research loop (docs/research.md): plan -> search -> reflect -> ... -> synthesize.

    state = start(task)
    plan once; the task itself is always the first query (retrieval does not depend
    on a small model phrasing queries well)
    while not sufficient and iteration < max_iters and the budget affords another
    round (time left, tokens for a reflection with the synthesis kept in reserve):
        search the pending queries (retry / reformulate / breaker / fallback)
        compact if the budget runs low or the state grows too big
        reflect: sufficient? confidence, gaps, new queries (+ reformulations)
        iteration += 1
    compact, synthesize from retrieved sources only, verify citations in code

The run kernel (kernel.py) is the run's shell: run id, trace, the metered
model (budget + trace), the clock, the phase events (with the
iteration, token_budget and results on each) and the one mapping of errors to stop reasons.
Every model output is schema-constrained and guarded. Whatever goes wrong ends as an
ErrorResponse with the evidence (answer.py), never as an exception or an empty answer.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from guardsearch.core.budget import Budget, BudgetLike
from guardsearch.core.context import Context
from guardsearch.core.errors import ConfigError, StepFailed
from guardsearch.core.events import Trace
from guardsearch.core.outcome import new_run_id, stop_reason_for
from guardsearch.core.source import Source
from guardsearch.core.steering import Steering
from guardsearch.core.usage import Usage
from guardsearch.corpus.query import terms
from guardsearch.kernel import Kernel, Stop
from guardsearch.loops.research.answer import (
    NO_VERIFICATION,
    ResearchRun,
    agent_response,
    agent_source,
    error_response,
    metadata,
)
from guardsearch.loops.research.citations import (
    ModelSupport,
    SupportJudge,
    Verification,
    cited_ids,
    markers,
    plain,
    strip_ids,
    support_judge,
    verify_citations,
)
from guardsearch.loops.research.compaction import RawStore, compact, compaction_reason
from guardsearch.loops.research.config import ResearchConfig, Tier, default_budget
from guardsearch.loops.research.evidence import (
    about,
    answer_clauses,
    answer_kind,
    bridges,
    comparison_sides,
    holds_answer,
    missing_sides,
    named_entities,
    named_stopwords,
    source_says,
    yes_or_no,
)
from guardsearch.loops.research.observability import phase_fields, phase_logger
from guardsearch.loops.research.phases import (
    DEGRADED_NOTE,
    NO_SOURCES_ANSWER,
    plan_step,
    reflect_step,
    render_results,
    render_sources,
    synthesize_step,
)
from guardsearch.loops.research.schemas import (
    AgentResponse,
    AgentSource,
    Citation,
    ErrorResponse,
    PlanDraft,
    PlanQuery,
    PlanResponse,
    ReflectionDraft,
    ReflectionResponse,
    ResponseMetadata,
    SynthesisDraft,
    SynthesisResponse,
)
from guardsearch.loops.research.state import (
    CitationRecord,
    Query,
    ResearchState,
    check_transition,
)
from guardsearch.loops.research.statements import Asides, narrows
from guardsearch.loops.research.subject import question_names
from guardsearch.models.base import Model, estimate_prompt_tokens
from guardsearch.prompts.untrusted import commands_in, echoes_instruction
from guardsearch.steps.step import Step, StepOutcome, run_step
from guardsearch.tools.base import SearchProvider
from guardsearch.tools.reformulate import broaden
from guardsearch.tools.resilient import QueryOutcome, ResilienceSettings, ResilientSearch
from guardsearch.tools.retry import Sleep

T = TypeVar("T")
# A synthesis stage: the step (its attempts), its variables, the phase event it opens.
Event = tuple[str, dict[str, Any]]
Stage = tuple[Step, dict[str, Any], Event | None]
log = logging.getLogger("guardsearch.research")
_REFORMULATION = "reformulation of: "
# Claim/source verdicts the loop keeps budget for when the model judges support.
SUPPORT_RESERVE_CALLS = 3


@dataclass
class ResearchLoop:
    """Runs research tasks with one model and an ordered list of search providers."""

    model: Model
    providers: Sequence[SearchProvider]
    config: ResearchConfig = field(default_factory=ResearchConfig.from_env)
    resilience: ResilienceSettings = field(default_factory=ResilienceSettings)
    sleep: Sleep = asyncio.sleep
    clock: Callable[[], float] = time.monotonic

    async def run(
        self,
        task: str,
        *,
        budget: BudgetLike = None,
        trace: Trace | None = None,
        run_id: str | None = None,
        **options: Any,
    ) -> ResearchRun:
        """Research `task` within `budget` (anything `Budget.of` takes; None: the
        `default_budget`); `options` override the config (tier, max_iters, ...).

        The run books on its own ledger with the budget's limits, whose deadline is the
        budget's seconds plus `synthesis_grace_s`: the loop stops at the seconds, the
        answer may still be written after them.
        """
        trace = trace if trace is not None else Trace()
        run_id = run_id or new_run_id()
        trace.subscribe(phase_logger(run_id))
        started = self.clock()
        try:
            config = self.config.with_options(**options)
            limits = Budget.of(budget if budget is not None else default_budget())
            task = " ".join(task.split())
            if not task:
                raise ConfigError("the task is empty")
        except ConfigError as exc:
            return self._invalid(run_id, trace, started, str(exc))
        run = _Run(self, config, limits, task, trace, run_id, started)
        run.kernel.phase("start", model=self.model.name)
        response: AgentResponse | ErrorResponse
        try:
            response = await run.execute()
        except Stop as stop:
            response, run.stop_reason = error_response(stop, run_id), stop.reason
        except Exception as exc:  # the last line of defence: an error response, no crash
            log.exception("research run %s failed unexpectedly", run_id)
            response = ErrorResponse.of(
                "internal_error", f"{type(exc).__name__}: {exc}", retryable=False
            )
            run.stop_reason = stop_reason_for(exc)
        ok = isinstance(response, AgentResponse)
        error = response.error.type if isinstance(response, ErrorResponse) else None
        fields = run.kernel.finish(run.stop_reason, ok=ok, error=error)
        steering = Steering.from_events(trace.events).as_dict()
        if isinstance(response, AgentResponse):
            response = response.model_copy(
                update={
                    "seconds": round(fields["seconds"], 3),
                    "run_id": run_id,
                    "steering": steering,
                }
            )
        else:
            details = {**(response.error.details or {}), "steering": steering}
            response = ErrorResponse(error=response.error.model_copy(update={"details": details}))
        return ResearchRun(
            **fields,
            succeeded=ok,
            response=response,
            state=run.state,
            search_failures=run.search.failures,
            plan=run.plan,
            reflections=run.reflections,
            synthesis=run.synthesis,
            verification=run.verification,
        )

    def _invalid(self, run_id: str, trace: Trace, started: float, message: str) -> ResearchRun:
        error = ErrorResponse.of("invalid_request", message, retryable=False)
        state = ResearchState(task="(invalid)", max_iters=1)
        unlimited = Budget.of()
        kernel = Kernel(
            "research",
            self.model,
            unlimited,
            trace=trace,
            run_id=run_id,
            clock=self.clock,
            started=started,  # the time spent on the request counts
            standing=lambda: phase_fields(state, unlimited),
        )
        fields = kernel.finish("invalid_request", ok=False, error=error.error.type)
        return ResearchRun(**fields, succeeded=False, response=error, state=state)


class _Run:
    """One run's own phases around its immutable states (kept out of ResearchLoop so
    one loop object serves many concurrent runs); the kernel is its shell."""

    def __init__(
        self,
        loop: ResearchLoop,
        config: ResearchConfig,
        limits: Budget,
        task: str,
        trace: Trace,
        run_id: str,
        started: float,
    ) -> None:
        self.config = config
        self.loop_seconds = limits.allowance.seconds
        grace = None if self.loop_seconds is None else self.loop_seconds + config.synthesis_grace_s
        ledger = Budget.of(limits, seconds=grace, clock=loop.clock)
        self.kernel = Kernel(
            "research",
            loop.model,
            ledger,
            trace=trace,
            run_id=run_id,
            clock=loop.clock,
            started=started,
            standing=lambda: phase_fields(self.state, ledger),
        )
        self.metered = self.kernel.metered
        self.search = ResilientSearch(
            loop.providers, settings=loop.resilience, trace=trace, sleep=loop.sleep
        )
        self.raw = RawStore()
        tier = config.limits(None)
        self.state = ResearchState(
            task=task,
            max_iters=tier.max_iters,
            max_queries=tier.max_queries,
            max_sources=tier.max_sources,
            tier=tier.name,
        )
        self.context = Context(objective=task)
        self.stop_reason = ""
        self.plan: PlanResponse | None = None
        self.reflections: list[ReflectionResponse] = []
        self.synthesis: SynthesisResponse | None = None
        self.verification: Verification | None = None
        self._pending: list[Query] = []
        self._hopped: set[str] = set()
        # One judge per run, shared by the synthesis guard and the final verification
        # (a model judge remembers its verdicts, so no pair is asked twice).
        self.judge: SupportJudge = support_judge(
            config.support, threshold=config.support_threshold, model=self.metered
        )

    # -- bookkeeping -----------------------------------------------------------------

    def advance(self, new: ResearchState) -> None:
        check_transition(self.state, new)
        self.state = new

    def phase(self, name: str, **data: Any) -> None:
        self.kernel.phase(name, **data)

    def out_of_time(self) -> bool:
        return self.loop_seconds is not None and self.kernel.elapsed() >= self.loop_seconds

    def metadata(self, tokens: int) -> ResponseMetadata:
        return metadata(self.metered.name, tokens)

    def cost(self, step: Step, variables: dict[str, Any]) -> int:
        """Upper-bound tokens of one call of `step` (the estimate Metered reserves)."""
        request = step.request(self.context, **variables)
        return estimate_prompt_tokens(self.metered.inner, request) + step.max_tokens

    def retrieved(self) -> dict[str, Source]:
        """Every retrieved source by id, with its full text (compaction keeps it in the
        raw store): verification reads its title and description with the text."""
        return {
            r.id: replace(r, text=self.raw.get(r.id, r.text)) for r in self.state.search_results
        }

    def synthesis_reserve(self) -> Usage:
        """What the final synthesis needs: the loop never spends it on more iterations."""
        s = self.state
        shown = s.ranked()[: self.config.synthesis_sources]
        synthesis = self.cost(
            synthesize_step(self.config, self.retrieved(), self.judge),
            self.synthesis_variables(shown),
        )
        return Usage(calls=1, prompt_tokens=synthesis) + self.support_reserve(shown)

    def support_reserve(self, shown: Sequence[Source]) -> Usage:
        """With `--support model` the verification calls the model too: keep enough for
        a few claim/source verdicts (the usual answer has one or two claims)."""
        if not isinstance(self.judge, ModelSupport) or not shown:
            return Usage()
        longest = max(shown, key=lambda r: len(r.text))
        task = self.state.task
        variables = {"claim": task, "source": longest.text[:1500], "question": task}
        one = self.cost(self.judge.step, variables)
        return Usage(calls=SUPPORT_RESERVE_CALLS, prompt_tokens=SUPPORT_RESERVE_CALLS * one)

    def reflection_cost(self) -> Usage:
        return Usage(calls=1, prompt_tokens=self.cost(*self.reflection_call()))

    async def step(self, phase: str, work: Awaitable[T]) -> T:
        """Await a phase's work; a failed step is logged in the state before it stops
        the run (the kernel maps the error to the stop)."""
        try:
            return await self.kernel.attempt(phase, work)
        except Stop as stop:
            if isinstance(stop.error, StepFailed):
                attempts = stop.error.attempts
                self.advance(self.state.with_error(phase, str(stop.error), attempt=attempts))
            raise

    # -- the loop --------------------------------------------------------------------

    async def execute(self) -> AgentResponse:
        await self.do_plan()
        while True:
            reason = self.stop_before_search()
            if reason:
                self.stop_reason = reason
                break
            await self.do_search()
            self.maybe_compact()
            reason = self.stop_before_reflect()
            if reason:
                self.stop_reason = reason
                break
            if not await self.evidence_suffices():
                await self.do_reflect()
            self.advance(self.state.next_iteration())
            hops = self.next_hop()
            if self.state.sufficient and not hops:
                self.stop_reason = "sufficient"
                break
            self.choose_next_queries(hops)
        self.advance(self.state.terminated(not self.state.sufficient))
        self.maybe_compact(before_synthesis=True)
        return await self.do_synthesize()

    def stop_before_search(self) -> str | None:
        s = self.state
        if s.iteration >= s.max_iters:
            return "max_iterations"
        # The first round searches even when the plan used up the loop's time (a slow or
        # loaded CPU): retrieval costs no model call, and the synthesis has its grace time,
        # so the answer comes from sources instead of "no sources were found".
        if self.out_of_time() and s.search_results:
            return "deadline"
        if s.degraded_mode:
            return "degraded"
        if not s.plan_queries:
            return "no_new_queries"
        return None

    def stop_before_reflect(self) -> str | None:
        if self.state.degraded_mode:
            return "degraded"  # searching is over; reflecting cannot change that
        if self.out_of_time():
            return "deadline"
        if not self.metered.budget.affords(self.reflection_cost(), self.synthesis_reserve()):
            return "budget_exhausted"
        return None

    async def do_plan(self) -> None:
        self.phase("plan")
        step = plan_step(self.config)
        try:
            outcome = await self.step(
                "plan",
                run_step(step, self.context, self.metered, variables={"task": self.state.task}),
            )
        except Stop as stop:
            if not isinstance(stop.error, StepFailed):
                raise  # the budget, the deadline or the backend: a later step fails alike
            self.plan_failed(stop.error)
            return
        draft = PlanDraft.model_validate(outcome.value)
        planned = [q for q in draft.queries if _meaningful(q.query)]
        self.plan = PlanResponse(queries=planned)
        limits = self.config.limits(draft.complexity)
        self.first_search(limits, [Query(query=q.query, intent=q.intent) for q in planned])
        self.phase(
            "planned",
            tier=limits.name,
            detected=draft.complexity,
            queries=[q.query for q in self.state.plan_queries],
        )

    def first_search(self, limits: Tier, planned: Sequence[Query]) -> None:
        """The state for the first search: the tier's limits, and the task as asked
        (always the first query) before what the plan added."""
        task = Query(query=self.state.task, intent="the task as asked")
        self.advance(
            self.state.with_limits(
                tier=limits.name,
                max_iters=limits.max_iters,
                max_queries=limits.max_queries,
                max_sources=limits.max_sources,
            ).with_queries([task, *planned])
        )

    def plan_failed(self, error: StepFailed) -> None:
        """No usable plan after the step's retries: search the task alone (always the
        first query, it needs no plan) at the configured tier, else standard. The
        failure is in the state's error log (phase `plan`) and a `plan_failed` event."""
        limits = self.config.limits(None)
        self.plan = PlanResponse(queries=[])
        self.first_search(limits, [])
        self.phase(
            "plan_failed",
            reason=str(error),
            feedback=error.feedback[-1] if error.feedback else "",
            attempts=error.attempts,
            tier=limits.name,
            queries=[q.query for q in self.state.plan_queries],
        )

    async def do_search(self) -> None:
        queries = self.state.plan_queries
        self.phase("search", queries=[q.query for q in queries])
        outcomes: list[QueryOutcome] = []
        for query in queries:
            if self.out_of_time() and (outcomes or self.state.search_results):
                break
            outcomes.append(await self.search.search(query.query, self.config.hits_per_query))
        new = self.state.with_search(outcomes)
        for result in new.search_results[len(self.state.search_results) :]:
            self.raw.put(result.id, result.text)
        if self.search.degraded and not new.degraded_mode:
            new = new.degraded()
        self.advance(new)
        self.phase(
            "searched",
            found=sum(len(o.hits) for o in outcomes),
            failed=[o.query for o in outcomes if o.failed],
            empty=[o.query for o in outcomes if not o.failed and o.empty],
            reformulated={o.query: o.reformulated_as for o in outcomes if o.reformulated_as},
            degraded=self.state.degraded_mode,
        )

    def maybe_compact(self, *, before_synthesis: bool = False) -> None:
        reason = compaction_reason(
            self.state,
            self.metered.budget,
            ratio=self.config.compaction_ratio,
            token_cap=self.config.state_token_cap,
            before_synthesis=before_synthesis,
        )
        if reason is None:
            return
        before = self.state.approx_tokens()
        self.advance(compact(self.state, self.config.active_results))
        self.phase(
            "compact",
            reason=reason,
            tokens_before=before,
            tokens_after=self.state.approx_tokens(),
            compacted=len(self.state.compacted),
        )

    def reflection_call(self) -> tuple[Step, dict[str, Any]]:
        s = self.state
        shown = s.ranked()[: self.config.active_results + 4]
        done = {r.query for r in s.queries_run}
        failed = [q for q in s.failed_queries if q in done][-4:]
        step = reflect_step(
            self.config,
            has_results=bool(s.search_results),
            can_continue=s.iteration + 1 < s.max_iters,
        )
        variables = {"task": s.task, "results": render_results(shown), "failed": "; ".join(failed)}
        return step, variables

    async def do_reflect(self) -> None:
        s = self.state
        self.phase("reflect")
        step, variables = self.reflection_call()
        outcome = await self.step(
            "reflect", run_step(step, self.context, self.metered, variables=variables)
        )
        draft = ReflectionDraft.model_validate(outcome.value)
        # Small models echo the prompt's placeholders ("..."): those are not gaps or queries.
        gaps = [g for g in draft.gaps if _meaningful(g)]
        new_queries = [q for q in draft.new_queries if _meaningful(q.query)]
        state = s
        self.reflections.append(
            ReflectionResponse(
                sufficient=draft.sufficient,
                confidence=draft.confidence,
                gaps=gaps,
                new_queries=new_queries,
                metadata=self.metadata(outcome.usage.total_tokens),
            )
        )
        self.advance(
            state.with_reflection(
                sufficient=draft.sufficient, confidence=draft.confidence, gaps=gaps
            )
        )
        self._pending = [Query(query=q.query, intent=q.intent) for q in new_queries]
        self.phase(
            "reflected",
            sufficient=draft.sufficient,
            confidence=draft.confidence,
            gaps=gaps,
            new_queries=[q.query for q in new_queries],
        )

    async def evidence_suffices(self) -> bool:
        """Code, not the model, decides the results suffice when a retrieved source about
        the question's subject holds a clause that can answer it (evidence.answer_clauses):
        no reflection call is paid for what the sources plainly state."""
        if not self.config.evidence_stop:
            return False
        found = answer_clauses(self.state.task, self.retrieved())
        if not found:
            return False
        self.advance(self.state.with_reflection(sufficient=True, confidence=0.9, gaps=[]))
        self._pending = []
        self.phase(
            "reflected", sufficient=True, by="evidence", sources=sorted({i for i, _ in found})
        )
        return True

    def next_hop(self) -> list[Query]:
        """The second hop: when no retrieved source can answer yet, the names the sources
        about the subject mention (near the question's relation words first) are searched
        next ("Psycho ... directed by Alfred Hitchcock" -> "Alfred Hitchcock"), once each."""
        full = self.retrieved()
        comparing = comparison_sides(self.state.task) is not None
        if (
            not self.config.hops
            or self.state.iteration >= self.state.max_iters
            # One side's clause answers nothing of a comparison: both facts are needed.
            or (not comparing and answer_clauses(self.state.task, full))
        ):
            return []
        done = {q.query.lower() for q in self.state.queries_run} | self._hopped
        hops: list[Query] = []
        if comparing:
            # A comparison's side whose fact is not retrieved yet is searched by its name.
            hops = [
                Query(query=name, intent="a side of the comparison")
                for name in missing_sides(self.state.task, full)
                if name.lower() not in done
            ]
        else:
            about_subject = [r for r in self.state.ranked() if about(self.state.task, full[r.id])]
            for source in about_subject[:2]:
                for name in named_entities(full[source.id], self.state.task, limit=2):
                    if name.lower() not in done:
                        done.add(name.lower())
                        hops.append(Query(query=name, intent=f"named by {source.id}: the next hop"))
        self._hopped |= {h.query.lower() for h in hops}
        if hops:
            self.phase("hop", queries=[h.query for h in hops])
        return hops[:3]

    def choose_next_queries(self, hops: Sequence[Query] = ()) -> None:
        """The next hop's names first; then the reflector's queries; else its gaps as
        queries; else broader variants of the queries that found too little (tier 2
        without a model call)."""
        s = self.state
        candidates = [*hops, *self._pending]
        candidates += [Query(query=g, intent="gap") for g in s.gaps]
        for failed in s.failed_queries:
            candidates += [
                Query(query=v, intent=f"{_REFORMULATION}{failed}") for v in broaden(failed)
            ]
        new = s.with_queries(candidates)
        for q in new.plan_queries:
            # Code's own reformulations (tier 2 without the model) are reported like the
            # search's: a note in the trace and an entry in the response's errors.
            if q.intent.startswith(_REFORMULATION):
                failed = q.intent[len(_REFORMULATION) :]
                self.kernel.trace.emit(
                    "note", step="search", what="reformulate", tier=2, query=failed, variant=q.query
                )
                new = new.with_error(
                    "reformulate",
                    f"too few results; next iteration searches {q.query!r}",
                    query=failed,
                    what="reformulate",
                    tier=2,
                )
        self.advance(new)
        self.phase(
            "next_queries",
            queries=[q.query for q in self.state.plan_queries],
        )

    async def do_synthesize(self) -> AgentResponse:
        s = self.state
        self.phase(
            "synthesize",
            degraded=s.degraded_mode,
            insufficient=s.insufficient_termination,
            stop_reason=self.stop_reason,
        )
        if not s.search_results:
            return self.no_source_answer()
        full = self.retrieved()
        if not any(about(s.task, source) for source in full.values()):
            # No retrieved source is about what the question names: the sources do not
            # say, and no model call is paid for a guess.
            return self.not_found([], "no retrieved source is about what the question names")
        bearing = list(dict.fromkeys(i for i, _ in answer_clauses(s.task, full)))
        ranked = [r for r in s.ranked() if r.id not in bearing]
        shown = [full[i] for i in bearing][: self.config.synthesis_sources]
        shown += ranked[: self.config.synthesis_sources - len(shown)]
        step = synthesize_step(self.config, full, self.judge)
        # The sources that can answer (else the one the question names by its title):
        # after one attempt over all the sources shown, the attempts left see only them.
        # The 0.5B copies what it is shown: given the one source that answers, it answers
        # from it (benchmarks/research_focus_probe.py).
        # (A yes/no question names two subjects: one source alone cannot decide it. A
        # list's retries carry what the sources name, which a fresh focused attempt drops.)
        kind = answer_kind(s.task)
        named = question_names(s.task, full) if kind not in ("yesno", "list") else None
        linked = bridges(s.task, full)
        # A second hop's source is focused on only when no source about the subject
        # itself can answer (the director's article for the director's birth year).
        hop = [i for i in bearing if i in linked] if all(i in linked for i in bearing) else []
        focus = [full[i] for i in hop[:1]] + ([full[named[0]]] if named else [])
        outcome = await self.drafts(step, shown, focus, full)
        if isinstance(outcome, AgentResponse):
            return outcome
        return await self.verified_answer(outcome, full)

    async def drafts(
        self, step: Step, shown: list[Source], focus: list[Source], full: dict[str, Source]
    ) -> StepOutcome | AgentResponse:
        """The synthesis attempts (`synthesis_stages`), each stage asked fresh after the
        one before fails; when the guards reject them all, the last draft marked
        unverified, or not found."""
        stages = self.synthesis_stages(step, shown, focus)
        for number, (attempt, variables, event) in enumerate(stages, 1):
            if event is not None:
                self.phase(event[0], **event[1])
            try:
                return await self.step(
                    "synthesize",
                    run_step(attempt, self.context, self.metered, variables=variables),
                )
            except Stop as stop:
                if not isinstance(stop.error, StepFailed):
                    raise
                if number == len(stages):
                    return self.unverified(stop, full)
        raise AssertionError("no synthesis stage")  # pragma: no cover

    def synthesis_stages(self, step: Step, shown: list[Source], focus: list[Source]) -> list[Stage]:
        """One attempt over every source shown, then (with a focus) the attempts left
        over the focused sources alone. A source about the subject is shown at first
        only in its paragraphs that name it (statements.py): a paragraph beside the
        subject (a note to the model reading the page, in any wording or language)
        reaches the synthesiser only on the last attempt, when the narrower ones failed
        (an answer a paragraph gives without naming the subject is not lost)."""
        narrow = any(narrows(self.state.task, r) for r in shown)
        if step.rmax < 2 or not (focus or narrow):
            return [(step, self.synthesis_variables(shown), None)]
        later = focus or shown
        event: Event | None = None
        if focus:
            about_it = {"source": focus[-1].id, "title": focus[-1].title}
            event = ("synthesize_focused", {**about_it, "sources": [f.id for f in focus]})
        one = replace(step, rmax=1)
        if not narrow:
            rest = replace(step, rmax=step.rmax - 1)
            return [
                (one, self.synthesis_variables(shown), None),
                (rest, self.synthesis_variables(later), event),
            ]
        stages: list[Stage] = [(one, self.synthesis_variables(shown, named=True), None)]
        if step.rmax > 2:
            named = self.synthesis_variables(later, named=True)
            stages.append((replace(step, rmax=step.rmax - 2), named, event))
            event = None
        whole: Event = ("synthesize_whole", {"sources": [r.id for r in later]})
        stages.append((one, self.synthesis_variables(later), event or whole))
        return stages

    async def verified_answer(self, outcome: StepOutcome, full: dict[str, Source]) -> AgentResponse:
        """The final verification of an accepted draft, and the answer it gives."""
        s = self.state
        draft = SynthesisDraft.model_validate(outcome.value)
        self.phase("verify", method=self.config.support)
        verification = await self.step(
            "verify",
            verify_citations(draft.answer, draft.citations, full, self.judge, question=s.task),
        )
        self.verification = verification
        if not verification.verified:
            return self.unverified_draft(draft, full, verification.feedback(sorted(full)))
        # Dropped ids and the sentences no source supports leave the answer (they are
        # reported in `citations`): nothing unsupported reads as if it were verified.
        answer = with_markers(verification.clean_answer, verification.verified)
        # A yes/no question's bare "No [1]" is an answer, though "no" is a stop word.
        verdict = answer_kind(s.task) == "yesno" and yes_or_no(plain(answer)) is not None
        if not (_meaningful(plain(answer), full) or verdict) or (
            answer_kind(s.task) == "yesno"
            and re.match(r"\W*(?:yes|no)\b", plain(draft.answer), re.I)
            and not re.match(r"\W*(?:yes|no)\b", plain(answer), re.I)
        ):
            # What verification kept is not the answer (its verdict, or every word, was
            # a sentence no source backed): the draft, whole, marked unverified.
            return self.unverified_draft(draft, full, verification.feedback(sorted(full)))
        for claim in verification.removed_claims:
            self.advance(
                self.state.with_error(
                    "verify", f"unsupported claim removed: {claim}", what="removed"
                )
            )
        if s.degraded_mode and DEGRADED_NOTE.lower() not in answer.lower():
            answer = f"{answer} ({DEGRADED_NOTE})"
        verified = [r for r in (s.result(i) for i in verification.verified) if r is not None]
        self.advance(
            self.state.with_citations(
                CitationRecord(id=r.id, title=r.title, type=r.kind, location=r.location)
                for r in verified
            )
        )
        tokens = outcome.usage.total_tokens
        self.synthesis = SynthesisResponse(
            answer=answer,
            citations=[
                Citation(id=c.id, title=c.title, type=c.type, location=c.location)
                for c in self.state.citations
            ],
            metadata=self.metadata(tokens),
        )
        self.phase(
            "verified",
            verified=list(verification.verified),
            hallucinated=list(verification.hallucinated),
            unsupported=list(verification.unsupported),
        )
        return self.response(
            answer, verification, [agent_source(r, full[r.id].text) for r in verified], tokens
        )

    def unverified(self, stop: Stop, full: dict[str, Source]) -> AgentResponse:
        """The guards rejected every draft: the last one, marked unverified, with the
        verdicts (a right answer is never thrown away for its form), or `not_found`.
        Without a draft (the model's output never parsed) the run stops on the error."""
        error = stop.error
        assert isinstance(error, StepFailed)
        last = error.last_artifact
        if last is None or last.parse_error is not None:
            raise stop
        try:
            draft = SynthesisDraft.model_validate(last.value)
        except ValueError:
            raise stop from None
        return self.unverified_draft(draft, full, error.feedback[-1] if error.feedback else "")

    def unverified_draft(
        self, draft: SynthesisDraft, full: dict[str, Source], verdict: str | list[str]
    ) -> AgentResponse:
        verdicts = [verdict] if isinstance(verdict, str) else list(verdict)
        verdicts = [v for v in verdicts if v]
        task = self.state.task
        plain_answer = plain(draft.answer)
        said = {i: source_says(source) for i, source in full.items()}
        commands = commands_in(said.values())
        if commands and any(
            echoes_instruction(plain_answer, t, task, commands) for t in said.values()
        ):
            # It repeats what a retrieved source told the model to say: never delivered.
            return self.not_found(verdicts, "the draft repeats an instruction found in a source")
        if Asides.of(task, full).echoed(plain_answer):
            # Its value is one a source gives only against its own answer: never delivered.
            return self.not_found(
                verdicts, "the draft gives a value a source has only in a passage contesting it"
            )
        verdict_only = answer_kind(task) == "yesno" and re.match(
            r"\W*(?:yes|no)\b", plain_answer, re.I
        )
        if not verdict_only and not holds_answer(plain_answer, task, full):
            # What the model said is in no retrieved source: a guess, not an answer.
            return self.not_found(verdicts, "no retrieved source states the model's answer", draft)
        ids = cited_ids(draft.answer, draft.citations)
        cited = [full[i] for i in ids if i in full]
        # Ids that were never retrieved leave the text: an unverified answer cites only
        # what the run retrieved.
        answer = with_markers(
            strip_ids(draft.answer, [i for i in ids if i not in full]), [c.id for c in cited]
        )
        self.stop_reason = "unverified_answer"
        self.phase("unverified", answer=answer, verdicts=verdicts[-2:])
        response = self.response(
            answer, NO_VERIFICATION, [agent_source(c, c.text) for c in cited], 0
        )
        return response.model_copy(update={"status": "unverified", "verdicts": verdicts[-3:]})

    def not_found(
        self, verdicts: Sequence[str], why: str, draft: SynthesisDraft | None = None
    ) -> AgentResponse:
        """The sources do not say: said plainly, with why and the model's draft if any."""
        self.stop_reason = "not_found"
        self.phase("not_found", reason=why)
        self.synthesis = SynthesisResponse(
            answer=NOT_FOUND, citations=[], metadata=self.metadata(0)
        )
        response = self.response(NOT_FOUND, NO_VERIFICATION, [], 0)
        return response.model_copy(
            update={
                "status": "not_found",
                "verdicts": [why, *list(verdicts)[-2:]],
                "draft": draft.answer if draft is not None else "",
            }
        )

    def synthesis_variables(
        self, shown: Sequence[Source], *, named: bool = False
    ) -> dict[str, Any]:
        s = self.state
        return {
            "task": s.task,
            "sources": render_sources(shown, self.config.snippet_chars, s.task, named=named),
            "degraded": s.degraded_mode,
            "insufficient": s.insufficient_termination,
        }

    def no_source_answer(self) -> AgentResponse:
        """Nothing was retrieved: say so plainly instead of letting the model guess."""
        answer = NO_SOURCES_ANSWER
        if self.state.degraded_mode:
            answer = f"{answer} ({DEGRADED_NOTE})"
        self.synthesis = SynthesisResponse(answer=answer, citations=[], metadata=self.metadata(0))
        return self.response(answer, NO_VERIFICATION, [], 0)

    def response(
        self, answer: str, verification: Verification, sources: list[AgentSource], tokens: int
    ) -> AgentResponse:
        return agent_response(
            self.state,
            answer,
            verification,
            sources,
            stop_reason=self.stop_reason,
            usage=self.metered.usage,
            meta=self.metadata(tokens),
        )


NOT_FOUND = "The sources do not say."


def with_markers(answer: str, ids: Sequence[str]) -> str:
    """`answer` with its citation markers: an answer that carries none ("1945") gets
    the ids it cites after it ("1945 [1]")."""
    if not ids or markers(answer):
        return answer
    body = answer.rstrip()
    stop = "." if body.endswith(".") else ""
    return f"{body.rstrip('.')} {' '.join(ids)}{stop}"


def _meaningful(text: str, sources: Mapping[str, Source] | None = None) -> bool:
    # "<title>" or "...": the prompt's placeholders echoed back, not a query or a gap.
    # A stop word a source writes as a name ("More") is a word.
    named = named_stopwords(text, sources) if sources else set()
    return bool(terms(text) or named) and "<" not in text and ">" not in text


__all__ = ["PlanQuery", "ResearchLoop", "ResearchRun"]
