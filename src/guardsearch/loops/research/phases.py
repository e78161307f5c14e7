"""The three model phases of the loop as guarded steps: plan, reflect, synthesize.

Each step's output is constrained by a bounded JSON Schema and checked by a code
guard; a failed guard's feedback goes back to the model on retry (steps/step.py).
The guards check what code can know for sure: no "sufficient" without sources, no
dead end without a new query, no answer without a citation that exists and says it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.guard_result import GuardResult
from guardsearch.core.source import Source
from guardsearch.corpus.query import terms
from guardsearch.loops.research.citations import SupportJudge, plain, verify_citations
from guardsearch.loops.research.config import ResearchConfig
from guardsearch.loops.research.schemas import PlanDraft, ReflectionDraft, SynthesisDraft
from guardsearch.prompts import PromptTemplate
from guardsearch.steps.step import Step

DEGRADED_NOTE = "Search capabilities were limited; answer is based on partial information."
NO_SOURCES_ANSWER = (
    "No sources were found for this question, so no answer can be given from retrieved sources."
)
_REFLECT_CHARS = 220


def _plan_guard(value: object) -> str | None:
    draft = PlanDraft.model_validate(value)
    distinct = {" ".join(q.query.lower().split()) for q in draft.queries}
    if len(distinct) < 2:
        return "the queries are all the same; give different queries (names, key terms)"
    return None


def plan_step(config: ResearchConfig) -> Step:
    return Step(
        name="research-plan",
        prompt=PromptTemplate.packaged("research_plan"),
        schema=PlanDraft,
        guard=_plan_guard,
        rmax=config.rmax,
        max_tokens=config.plan_max_tokens,
    )


def reflect_step(config: ResearchConfig, *, has_results: bool, can_continue: bool) -> Step:
    def reflection_guard(value: object) -> str | None:
        draft = ReflectionDraft.model_validate(value)
        if draft.sufficient and not has_results:
            return (
                "no source was retrieved yet, so the results cannot be sufficient; "
                "set sufficient to false and propose new queries"
            )
        if not draft.sufficient and can_continue and not draft.new_queries:
            return "the results are not sufficient: propose at least one new query"
        return None

    return Step(
        name="research-reflect",
        prompt=PromptTemplate.packaged("research_reflect"),
        schema=ReflectionDraft,
        guard=reflection_guard,
        rmax=config.rmax,
        max_tokens=config.reflect_max_tokens,
    )


def synthesize_step(
    config: ResearchConfig, sources: Mapping[str, str], judge: SupportJudge
) -> Step:
    """The synthesis step; its guard verifies citations against `sources` with `judge`,
    the run's configured support check (lexical, the model, or existence only)."""
    ids = sorted(sources, key=lambda i: int(i.strip("[]")))

    async def citation_guard(value: object, artifact: Artifact, context: Context) -> GuardResult:
        draft = SynthesisDraft.model_validate(value)
        words = {w for w in terms(plain(draft.answer)) if not w.isdigit()}
        if not words:
            return GuardResult.fail(
                "the answer has no words: state the answer in a sentence, then the source id "
                'after it, e.g. "... was painted by X [1]."',
                "citations",
            )
        if not words - set(terms(context.objective)):
            # "Who wrote Moby-Dick?" -> "Moby-Dick [1]" cites a true source and says nothing.
            return GuardResult.fail(
                "the answer only repeats the question; state the fact the question asks for, "
                "as the sources say it",
                "answer",
            )
        if not sources:
            return GuardResult.ok("citations")
        verification = await verify_citations(
            draft.answer, draft.citations, sources, judge, question=context.objective
        )
        if verification.verified:
            # Extra bad ids are dropped and reported later; one verified citation is enough.
            return GuardResult.ok(
                "citations", score=len(verification.verified) / max(1, len(verification.cited))
            )
        return GuardResult.fail(verification.feedback(ids[:8]), "citations")

    return Step(
        name="research-synthesize",
        prompt=PromptTemplate.packaged("research_synthesize"),
        schema=SynthesisDraft,
        guard=citation_guard,
        rmax=config.rmax,
        max_tokens=config.synthesize_max_tokens,
    )


def render_results(results: Sequence[Source], chars: int = _REFLECT_CHARS) -> str:
    """Short lines for the reflector: id, title, the start of the text."""
    if not results:
        return "(no results)"
    return "\n".join(f"{r.id} {r.title}: {_cut(r.text, chars)}" for r in results)


def render_sources(results: Sequence[Source], chars: int) -> str:
    """The numbered sources the synthesiser may cite."""
    lines = []
    for r in results:
        about = f" ({r.description})" if r.description else ""
        lines.append(f"{r.id} {r.title}{about}: {_cut(r.text, chars)}")
    return "\n".join(lines)


def _cut(text: str, chars: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= chars else flat[: chars - 1].rstrip() + "…"
