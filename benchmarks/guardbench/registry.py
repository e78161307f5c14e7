"""Every shipped guard that is measured: where it lives, how its set is built, how a
case is judged. Code guards need no model; model guards take one (`--model`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from guardbench import (
    find_cases,
    game24_cases,
    plan_cases,
    program_cases,
    research_cases,
    research_type_cases,
    task_cases,
)
from guardbench.cases import Case

Judge = Callable[[Case, Any], Awaitable[bool]]
Builder = Callable[[dict[str, Any]], list[Case]]


@dataclass(frozen=True)
class GuardSpec:
    name: str
    where: str
    what: str
    build: Builder
    judge: Judge
    truth: str = ""
    model: bool = False
    # The set of another guard this one is measured on (model judges reuse a code
    # guard's cases), else its own.
    cases_of: str = ""
    # The builder sets each case's split itself (by task, so a task's cases stay in
    # the half its evaluation uses), instead of build_sets' split by label and shape.
    presplit: bool = False

    @property
    def set_name(self) -> str:
        return self.cases_of or self.name


def _sync(fn: Callable[[Case], bool]) -> Judge:
    async def judge(case: Case, model: Any) -> bool:
        return fn(case)

    return judge


def _async(fn: Callable[[Case], Awaitable[bool]]) -> Judge:
    async def judge(case: Case, model: Any) -> bool:
        return await fn(case)

    return judge


async def _support_sources(case: Case, model: Any) -> bool:
    return await research_cases.judge_support(case, as_sources=True)


async def _support_texts(case: Case, model: Any) -> bool:
    return await research_cases.judge_support(case)


async def _support_model(case: Case, model: Any) -> bool:
    return await research_cases.judge_support(case, "model", model, as_sources=True)


async def _find_judge(case: Case, model: Any) -> bool:
    return await find_cases.judge_model(case, model)


async def _find_verifier(case: Case, model: Any) -> bool:
    return await find_cases.judge_verifier(case, model)


def _program(fn: str, truth: str) -> GuardSpec:
    async def judge(case: Case, model: Any) -> bool:
        return await program_cases.judge(case, fn)

    builders = {
        "is_goal": program_cases.goal_cases,
        "combine": program_cases.combine_cases,
        "successors": program_cases.successors_cases,
    }
    return GuardSpec(
        name=f"program-{fn.replace('_', '-')}",
        where=f"guards/code_tests.py CodeGuard with apps/game24/program.py's {fn} tests",
        what=f"a Game of 24 {fn}() the model wrote",
        truth=truth,
        build=lambda _ctx: builders[fn](),
        judge=judge,
    )


def _plan_level(level: str) -> GuardSpec:
    return GuardSpec(
        name=f"plan-{level}",
        where=f"apps/plan/guards.py {level.capitalize()}PlanGuard",
        what=f"a plan at the {level} level",
        truth=f"the {level} level's semantics, by an independent executor",
        build=lambda _ctx, lv=level: plan_cases.plan_guard_cases(lv),  # type: ignore[misc]
        judge=_async(plan_cases.judge_plan),
    )


GUARDS: tuple[GuardSpec, ...] = (
    GuardSpec(
        name="research-support",
        truth="the answer is the question's answer and the cited source says it",
        where="loops/research/phases.py synthesize_step guard + citations.py (lexical), "
        "handed Sources (title and description with the text) as the loop does",
        what="an answer and its cited sources, for a question",
        build=lambda ctx: research_cases.support_cases(ctx["exclude"], ctx["works"]),
        judge=_support_sources,
    ),
    GuardSpec(
        name="research-answer-types",
        truth="the answer is the question's answer and the cited source states it as that "
        "(every answer type: dates, numbers, places, people, organisations, titles, yes/no, "
        "lists, definitions, two hops, unanswerable)",
        where="loops/research/synthesis_guard.py judge_draft (evidence.py, citations.py), "
        "handed Sources as the loop does",
        what="an answer of the wide evaluation's types and its cited sources",
        build=lambda ctx: research_type_cases.cases(ctx["exclude"] | ctx["fresh"]),
        judge=_support_sources,
    ),
    GuardSpec(
        name="research-support-texts",
        where="the same guard handed only each source's text (a caller passing strings)",
        what="the research-support cases",
        truth="as research-support",
        build=lambda ctx: [],
        judge=_support_texts,
        cases_of="research-support",
    ),
    GuardSpec(
        name="research-support-model",
        truth="as research-support",
        where="citations.py ModelSupport (--support model): the lexical check, then the "
        "model's vote",
        what="the same cases, judged by the model",
        build=lambda ctx: [],
        judge=_support_model,
        model=True,
        cases_of="research-support",
    ),
    GuardSpec(
        name="research-plan",
        truth="the queries differ in their words (BM25 ignores order and case)",
        where="loops/research/state.py ResearchState.with_queries (same words, one query)",
        what="the planner's queries",
        build=lambda ctx: research_cases.plan_cases(ctx["exclude"]),
        judge=_async(research_cases.judge_plan),
    ),
    GuardSpec(
        name="find-type-rule",
        truth="one work of the kind (a biography or a 'KIND festival' is not)",
        where="apps/find/rules.py type_rejection",
        what="an article as one item of the requested type",
        build=lambda ctx: find_cases.type_cases(),
        judge=_sync(find_cases.judge_type),
    ),
    GuardSpec(
        name="find-evidence-rule",
        truth="the creator's own description gives the asked nationality",
        where="apps/find/act.py qualifier_gaps",
        what="a work for a 'KIND by NATIONALITY MAKERS' request",
        build=lambda ctx: find_cases.evidence_cases(),
        judge=_sync(find_cases.judge_evidence),
    ),
    GuardSpec(
        name="find-judge",
        truth="as find-evidence-rule",
        where="apps/find/verify.py model judge (find_judge prompt)",
        what="the evidence-rule cases, judged by the model",
        build=lambda ctx: [],
        judge=_find_judge,
        model=True,
        cases_of="find-evidence-rule",
    ),
    GuardSpec(
        name="find-verifier",
        truth="as find-evidence-rule",
        where="apps/find/verify.py Verifier: type rule, evidence rule, then the model judge",
        what="the evidence-rule cases, judged as a find run judges a candidate",
        build=lambda ctx: [],
        judge=_find_verifier,
        model=True,
        cases_of="find-evidence-rule",
    ),
    GuardSpec(
        name="find-plan",
        truth="the item type is the request's item noun",
        where="apps/find/steps.py plan_step guard",
        what="the item type the planner picked",
        build=lambda ctx: find_cases.plan_cases(),
        judge=_async(find_cases.judge_plan),
    ),
    *(_plan_level(level) for level in plan_cases.LEVELS),
    GuardSpec(
        name="plan-analysis",
        truth="the key facts are facts of the problem",
        where="apps/plan/step_guards.py AnalysisGuard",
        what="the analysis step's key facts",
        build=lambda ctx: plan_cases.analysis_cases(),
        judge=_async(plan_cases.judge_step),
    ),
    GuardSpec(
        name="plan-recon",
        truth="the listed actions can reach the goal from the initial facts",
        where="apps/plan/step_guards.py ReconGuard",
        what="the actions recon lists",
        build=lambda ctx: plan_cases.recon_cases(),
        judge=_async(plan_cases.judge_step),
    ),
    GuardSpec(
        name="plan-strategy",
        truth="approach, rationale, recon's actions only, and the order reaches the goal",
        where="apps/plan/step_guards.py StrategyGuard",
        what="the strategy's approach and order",
        build=lambda ctx: plan_cases.strategy_cases(),
        judge=_async(plan_cases.judge_step),
    ),
    GuardSpec(
        name="plan-task",
        truth="every hand-written constraint of the task addressed (a budget's costs within "
        "it), no repeated step, no stated order broken (free_tasks.py)",
        where="apps/plan/task_guards.py TaskPlanGuard, with the spec code reads from the task",
        what="a plan for a free task",
        build=lambda ctx: task_cases.task_plan_cases(),
        judge=_async(task_cases.judge_plan),
        presplit=True,
    ),
    GuardSpec(
        name="plan-task-analysis",
        truth="the class is the task's hand-written kind",
        where="apps/plan/step_guards.py AnalysisGuard, with the spec code reads from the task",
        what="a free task's analysis class",
        build=lambda ctx: task_cases.analysis_cases(),
        judge=_async(task_cases.judge_analysis),
        presplit=True,
    ),
    GuardSpec(
        name="game24-step",
        truth="exact arithmetic on the numbers left (an independent evaluator)",
        where="apps/game24/space.py parse + objective_checks",
        what="one proposed step",
        build=lambda ctx: game24_cases.step_cases(),
        judge=_sync(game24_cases.judge_step),
    ),
    GuardSpec(
        name="game24-final",
        truth="each input once and exactly 24 (an independent evaluator)",
        where="apps/game24/arith.py check_answer (space.evaluate's final check)",
        what="a final expression",
        build=lambda ctx: game24_cases.final_cases(),
        judge=_sync(game24_cases.judge_final),
    ),
    GuardSpec(
        name="game24-answer-text",
        truth="the Answer line is a right expression",
        where="apps/game24/baselines.py extract_answer + check_answer",
        what="a baseline's answer text",
        build=lambda ctx: game24_cases.answer_text_cases(),
        judge=_sync(game24_cases.judge_answer_text),
    ),
    _program("is_goal", "True exactly for one number equal to 24 (an independent evaluator)"),
    _program(
        "combine",
        "exactly the six results on every pair of a grid with 0, negatives and fractions "
        "(an independent evaluator)",
    ),
    _program(
        "successors",
        "exactly the legal children of every state reachable from 40 training puzzles "
        "(an independent evaluator)",
    ),
)


def by_name(name: str) -> GuardSpec:
    for spec in GUARDS:
        if spec.name == name:
            return spec
    raise KeyError(name)


def judge_all(spec: GuardSpec, cases: list[Case], model: Any = None) -> list[bool]:
    async def run() -> list[bool]:
        return [await spec.judge(c, model) for c in cases]

    return asyncio.run(run())
