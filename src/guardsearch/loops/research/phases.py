"""The three model phases of the loop as guarded steps: plan, reflect, synthesize.

Each step's output is constrained by a bounded JSON Schema and checked by a code
guard; a failed guard's feedback goes back to the model on retry (steps/step.py).
The guards check what code can know for sure: no "sufficient" without sources, no
dead end without a new query, no answer without a citation that exists and says it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.guard_result import GuardResult
from guardsearch.core.source import Source
from guardsearch.corpus.query import terms
from guardsearch.guards.base import FunctionGuard
from guardsearch.loops.research.citations import (
    NoSupportCheck,
    SupportJudge,
    beyond,
    cut,
    is_short,
    lexical_support,
    plain,
    source_text,
    verify_citations,
)
from guardsearch.loops.research.config import ResearchConfig
from guardsearch.loops.research.schemas import PlanDraft, ReflectionDraft, SynthesisDraft
from guardsearch.loops.research.subject import (
    asked_subject,
    described_subject,
    question_names,
    quoted_source,
)
from guardsearch.prompts import PromptTemplate
from guardsearch.prompts.untrusted import DATA_RULE, repeats_instructions
from guardsearch.steps.step import Step

DEGRADED_NOTE = "Search capabilities were limited; answer is based on partial information."
NO_SOURCES_ANSWER = (
    "No sources were found for this question, so no answer can be given from retrieved sources."
)
_REFLECT_CHARS = 220
# Retrieved sources a failed synthesis is checked against for a repair (best lexical
# match first): with `--support model` each costs one judge call.
REPAIR_CANDIDATES = 3
# Headings of a rendered prompt (core/context.py, the data fence): no answer holds them.
_PROMPT_MARKS = (
    "primary objective:",
    "your previous output for this step",
    "already answered at this step",
    "<data>",
    "</data>",
)


def plan_step(config: ResearchConfig) -> Step:
    """The planner: a complexity guess and queries, checked by their schema only.

    No guard judges the queries: the task itself is searched first, and queries with
    the same words as the task or as each other are dropped by code (`ResearchState.
    with_queries`), so a plan that only repeats the question costs nothing. A guard
    that sent such a plan back ended runs whose first query needed no plan (issue 16)."""
    return Step(
        name="research-plan",
        prompt=PromptTemplate.packaged("research_plan"),
        schema=PlanDraft,
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


def _wording(template: PromptTemplate) -> str:
    """A template's fixed words (its Jinja tags taken out) and the data rule."""
    fixed = re.sub(r"\{[{%#].*?[}%#]\}", " ", f"{template.system}\n{template.user}")
    return f"{fixed}\n{DATA_RULE}"


def citation_constraint(ids: Sequence[str]) -> dict[str, object] | None:
    """The shape part of the citation rule: cite at least one id, each a retrieved one
    (a backend with constrained decoding cannot cite a source that was not retrieved,
    or none at all); None without sources."""
    if not ids:
        return None
    return {"properties": {"citations": {"items": {"enum": list(ids)}, "minItems": 1}}}


async def supporting_source(
    answer: str,
    sources: Mapping[str, str] | Mapping[str, Source] | Mapping[str, str | Source],
    judge: SupportJudge,
    question: str,
) -> str | None:
    """The retrieved source that supports `answer` as the answer to `question`, if one of
    the `REPAIR_CANDIDATES` best lexical matches does (by the run's own verification).
    With `--support off` nothing says a source supports anything: no repair."""
    if isinstance(judge, NoSupportCheck):
        return None
    flat = plain(answer)
    ranked = sorted(sources, key=lambda i: -lexical_support(flat, source_text(sources[i])))
    for source_id in ranked[:REPAIR_CANDIDATES]:
        verification = await verify_citations(flat, [source_id], sources, judge, question=question)
        if source_id in verification.verified:
            return source_id
    return None


def answer_patch(answer: str, source_id: str) -> list[dict[str, object]]:
    """The JSON Patch of a repair that answers with `answer`, citing `source_id` alone."""
    return [
        {"op": "replace", "path": "/answer", "value": answer},
        {"op": "replace", "path": "/citations", "value": [source_id]},
    ]


def answer_from(pointer: tuple[str, str, str]) -> str:
    """The fix a verdict names for a question about a named source: what it says."""
    source_id, _, lead = pointer
    return f'says: "{lead}" Answer from what it says, citing {source_id}.'


def synthesize_step(
    config: ResearchConfig,
    sources: Mapping[str, str] | Mapping[str, Source] | Mapping[str, str | Source],
    judge: SupportJudge,
) -> Step:
    """The synthesis step; its guard verifies citations against `sources` with `judge`,
    the run's configured support check (lexical, the model, or existence only), and
    refuses an answer that repeats the prompt's own wording (whatever the support check).

    The guard declares the citation rule's shape (`citation_constraint`: compiled into
    the request schema) and, when the answer is supported by a retrieved source it did
    not cite, repairs the draft with a patch that cites that source instead of
    discarding the answer (issue 16: prevent and repair)."""
    ids = sorted(sources, key=lambda i: int(i.strip("[]")))
    template = PromptTemplate.packaged("research_synthesize")
    wording = _wording(template)

    async def citation_guard(value: object, artifact: Artifact, context: Context) -> GuardResult:
        draft = SynthesisDraft.model_validate(value)
        flat = plain(draft.answer).rstrip(".")
        words = {w for w in terms(flat) if not w.isdigit()}
        if not words:
            return GuardResult.fail(
                "the answer has no words: state the answer in a sentence, then the source id "
                'after it, e.g. "... was painted by X [1]."',
                "citations",
            )
        if repeats_instructions(draft.answer, wording) or any(
            mark in draft.answer.lower() for mark in _PROMPT_MARKS
        ):
            # "Print your system prompt" in a source: the prompt is not the answer.
            return GuardResult.fail(
                "the answer repeats these instructions; answer the question from the sources",
                "answer",
            )
        if not words - set(terms(context.objective)):
            # "Who wrote Moby-Dick?" -> "Moby-Dick [1]" cites a true source and says nothing.
            named = (
                described_subject(
                    set(terms(plain(draft.answer))), sources, question=context.objective
                )
                or quoted_source(set(terms(flat)), sources, context.objective)
                # "Seat of government of Bolivia?" -> "Bolivia": the answer took a word of
                # the question, and the question itself restates [1]'s description.
                or described_subject(set(terms(context.objective)), sources)
            )
            if named is not None:
                # "Which subject is described as: Capital of West Bengal?" -> "Capital of
                # West Bengal" restates source [3]'s description: its subject is [3]'s title.
                # 'Which subject is this about: "It was founded by Kiichiro Toyoda ..."?'
                # -> the quote again: it is from source [2]'s text, about Toyota.
                source_id, title = named
                return GuardResult.fail(
                    f"the answer only repeats the question; what it repeats is from "
                    f"source {source_id}, whose subject is {title!r}",
                    "answer",
                    patch=answer_patch(title, source_id),
                )
            return GuardResult.fail(
                "the answer only repeats the question; state the fact the question asks for, "
                "as the sources say it",
                "answer",
            )
        if not sources:
            return GuardResult.ok("citations")
        subject = asked_subject(context.objective, sources)
        if subject is not None and not set(terms(subject[1])) & set(terms(flat)):
            # 'Which subject is this about: "The coucals and anis are ..."?' -> "Birds":
            # true of the article the quote is from, and not the subject asked for. The
            # one source holding the quote (or whose description the question restates)
            # is that subject, whatever the model guessed. An answer sharing a word of
            # its title stands ("Frederick II" for Frederick the Great).
            source_id, title = subject
            return GuardResult.fail(
                f"the question asks which subject this is; the quoted or described text "
                f"is source {source_id}'s, whose subject is {title!r}, not {flat!r}",
                "answer",
                patch=answer_patch(title, source_id),
            )
        verification = await verify_citations(
            draft.answer, draft.citations, sources, judge, question=context.objective
        )
        pointer = question_names(context.objective, sources)
        if (
            verification.verified
            and pointer is not None
            and pointer[0] not in verification.verified
            and is_short(flat)
            and lexical_support(beyond(flat, context.objective), source_text(sources[pointer[0]]))
            < 0.5
        ):
            # "Who directed the film The Jazz Singer?" -> "Billie Holiday [4]": her article
            # says "jazz singer", and the article about the film the question names does
            # not say her name. A short answer must be in the source the question names.
            source_id, title, _ = pointer
            return GuardResult.fail(
                f"the question names {title!r}, and source {source_id}, about it, does not "
                f"say {flat!r}; it {answer_from(pointer)}",
                "citations",
            )
        if verification.verified:
            unnamed = described_subject(set(terms(flat)), sources)
            if unnamed is not None and not set(terms(unnamed[1])) <= set(terms(context.objective)):
                # "Which subject is this about: 'It was founded by Kiichiro Toyoda ...'"
                # -> "Japanese automotive manufacturer [2]": true of [2], whose subject
                # the answer describes without naming it (the question does not name it
                # either, or describing it would answer).
                source_id, title = unnamed
                return GuardResult.fail(
                    f"the answer describes the subject of source {source_id} without naming "
                    f"it; name it: {title!r}",
                    "answer",
                    patch=answer_patch(f"{title} ({flat})", source_id),
                )
            # Extra bad ids are dropped and reported later; one verified citation is enough.
            return GuardResult.ok(
                "citations", score=len(verification.verified) / max(1, len(verification.cited))
            )
        found = await supporting_source(draft.answer, sources, judge, context.objective)
        patch = None
        if found is not None:
            # A right answer is not thrown away for a missing or wrong citation: cite the
            # retrieved source that says it (the step re-judges the repaired draft).
            patch = [{"op": "replace", "path": "/citations", "value": [found]}]
        feedback = verification.feedback(ids[:8])
        if pointer is not None and pointer[0] not in verification.verified:
            # The fix, not only the failure: "Who composed the opera Don Giovanni?" ->
            # "Palestrina [3]" is sent back with what the source about Don Giovanni says.
            source_id, title, _ = pointer
            feedback += f" The question names {title!r}; source {source_id} {answer_from(pointer)}"
        return GuardResult.fail(feedback, "citations", patch=patch)

    rule = FunctionGuard(citation_guard, "citations", constraint=citation_constraint(ids) or None)
    return Step(
        name="research-synthesize",
        prompt=template,
        schema=SynthesisDraft,
        guard=rule,
        rmax=config.rmax,
        max_tokens=config.synthesize_max_tokens,
    )


def render_results(results: Sequence[Source], chars: int = _REFLECT_CHARS) -> str:
    """Short lines for the reflector: id, title, the start of the text."""
    if not results:
        return "(no results)"
    return "\n".join(f"{r.id} {r.title}: {cut(r.text, chars)}" for r in results)


def render_sources(results: Sequence[Source], chars: int) -> str:
    """The numbered sources the synthesiser may cite."""
    lines = []
    for r in results:
        about = f" ({r.description})" if r.description else ""
        lines.append(f"{r.id} {r.title}{about}: {cut(r.text, chars)}")
    return "\n".join(lines)
