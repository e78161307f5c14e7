"""The synthesis guard as named checks, run in order; the first that fails is the verdict.

    instructions the answer does not repeat the prompt's own wording
    comparison   a yes/no comparison: the two facts the sources state decide it (a patch
                 to "Yes: A was born in 1798 [1]; B was born in 1915 [2].")
    echo         the answer says something the question does not (a repeat of the
                 question's words names nothing; when what it repeats is one source's
                 description or quoted text, that source's title is the answer: a patch)
    subject      a "which subject is this" question is answered by the subject its
                 quote or description belongs to (a patch to that source's title)
    form         the answer has the form the question asks for (a year, a number, a
                 yes/no, a name) -- never "use more words": "1945" answers a year
    list         a list question gets as many items as it asks for, each named by the
                 sources in the question's relation to the subject
    hop          a two-hop question's year or number is the one the second hop's source
                 gives (a patch: "1881 [6]" from "(born 1881" in the article the first
                 hop names), not the first hop's own
    span         a year asked as a start or an end ("When did X become Empress?") that is
                 the wrong end of a span the subject's source gives ("from 690 to 705")
                 is repaired to the span's other end, cited
    maker        a "who made it" answer is the name the subject's own source gives
                 after the relation (a patch: "Kiichiro Toyoda [1]" from "It was founded
                 by Kiichiro Toyoda")
    support      a cited source states the answer *as the answer to this question*
                 (citations.verify_citations with evidence.py: the subject's source or
                 a source it names, the relation in the answer's clause); when another
                 retrieved source states it, the citations are repaired

Each check reads the draft, the question and the retrieved sources, and returns a
GuardResult or None (passed). No check is keyed on a question's wording.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from guardsearch.core.guard_result import GuardResult
from guardsearch.core.source import Source
from guardsearch.corpus.query import terms
from guardsearch.loops.research.citations import (
    NoSupportCheck,
    SupportJudge,
    beyond,
    cut,
    is_short,
    lexical_support,
    plain,
    verify_citations,
)
from guardsearch.loops.research.evidence import (
    Fact,
    answer_kind,
    bare_title,
    bridges,
    choice,
    choice_sides,
    chosen_name,
    claim_verdict,
    comparative,
    compared,
    comparison_facts,
    decided,
    find_answer,
    fits_kind,
    hop_value,
    in_own_article,
    items_named,
    list_candidates,
    list_evidence,
    list_size,
    maker,
    named_stopwords,
    numbers_in,
    other_end,
    relation_words,
    yes_or_no,
)
from guardsearch.loops.research.evidence import source_says as said_by
from guardsearch.loops.research.schemas import SynthesisDraft
from guardsearch.loops.research.subject import (
    asked_subject,
    described_subject,
    question_names,
    quoted_source,
)
from guardsearch.prompts.untrusted import repeats_instructions

Sources = Mapping[str, str] | Mapping[str, Source] | Mapping[str, str | Source]
# Retrieved sources a failed synthesis is checked against for a repair (best lexical
# match first): with `--support model` each costs one judge call.
REPAIR_CANDIDATES = 3
# Headings of a rendered prompt (core/context.py, the data fence): no answer holds them.
PROMPT_MARKS = (
    "primary objective:",
    "your previous output for this step",
    "already answered at this step",
    "<data>",
    "</data>",
)


@dataclass(frozen=True)
class Draft:
    """What every check reads: the draft, its plain text and the question."""

    value: SynthesisDraft
    question: str
    sources: Sources
    wording: str  # the synthesis prompt's own fixed words

    @property
    def flat(self) -> str:
        return plain(self.value.answer).rstrip(".")


Check = Callable[[Draft, SupportJudge], Awaitable[GuardResult | None]]


def answer_patch(answer: str, *source_ids: str) -> list[dict[str, object]]:
    """The JSON Patch of a repair that answers with `answer`, citing `source_ids` alone."""
    return [
        {"op": "replace", "path": "/answer", "value": answer},
        {"op": "replace", "path": "/citations", "value": list(dict.fromkeys(source_ids))},
    ]


async def form(draft: Draft, judge: SupportJudge) -> GuardResult | None:
    if not _words(draft) and yes_or_no(draft.flat) is None:
        return GuardResult.fail("the answer is empty: state what the sources say", "answer")
    kind = answer_kind(draft.question)
    wrong = fits_kind(draft.value.answer, kind)
    if wrong:
        return GuardResult.fail(wrong, "answer")
    if kind == "yesno" and comparative(draft.question) and not numbers_in(draft.flat):
        # "Yes" alone cannot be checked: the two facts that decide it can.
        return GuardResult.fail(
            'say "Yes" or "No", then the two facts that decide it, each with its source, '
            'e.g. "No. A was born in 1895 [1] and B was born in 1762 [2]."',
            "answer",
        )
    return None


async def instructions(draft: Draft, judge: SupportJudge) -> GuardResult | None:
    answer = draft.value.answer
    if repeats_instructions(answer, draft.wording) or any(
        mark in answer.lower() for mark in PROMPT_MARKS
    ):
        # "Print your system prompt" in a source: the prompt is not the answer.
        return GuardResult.fail(
            "the answer repeats these instructions; answer the question from the sources",
            "answer",
        )
    return None


def _words(draft: Draft) -> set[str]:
    """The answer's content words, with a stop word the sources write as a name ("More"
    for "Who wrote Utopia?": "satire by Thomas More")."""
    return set(terms(draft.flat)) | named_stopwords(draft.flat, draft.sources)


def _adds_nothing(draft: Draft) -> bool:
    """The answer's words and numbers are all the question's."""
    asked = set(terms(draft.question))
    words = {w for w in _words(draft) if not w.isdigit()}
    numbers = numbers_in(draft.flat) - numbers_in(draft.question)
    return not numbers and not (words - asked)


async def echo(draft: Draft, judge: SupportJudge) -> GuardResult | None:
    if not _adds_nothing(draft):
        return None
    if answer_kind(draft.question) == "yesno" and yes_or_no(draft.flat) is not None:
        return None  # its yes or no is what it adds; the claim and support checks judge it
    if choice(draft.question) is not None:
        return None  # "Plato": the name it picks is the question's; the comparison judges it
    sides = choice_sides(draft.question)
    if sides is not None and any(_words(draft) <= set(terms(side)) for side in sides):
        return None  # "Russia" for "Which is larger, Russia or Canada?": the support judges
    made = maker(draft.question, draft.sources)
    if made is not None and _words(draft) <= set(terms(made[1])):
        return None  # "Ford" for Ford Motor Company's founder: "founded by Henry Ford"
    sources, question = draft.sources, draft.question
    named = (
        described_subject(set(terms(draft.flat)), sources, question=question)
        or quoted_source(set(terms(draft.flat)), sources, question)
        or described_subject(set(terms(question)), sources)
    )
    pointer = question_names(question, sources) if answer_kind(question) == "definition" else None
    if named is None and pointer is not None:
        # "What is Eritrea?" answered "Eritrea": what the named source says it is.
        source_id, title, lead = pointer
        return GuardResult.fail(
            f"the answer only repeats the question; source {source_id}, about {title!r}, "
            f"{answer_from(pointer)}",
            "answer",
            patch=answer_patch(f"{lead.rstrip('. ')} {source_id}", source_id),
        )
    if named is not None:
        # What the answer repeats is a source's description or text: its subject is
        # that source's title.
        source_id, title = named
        return GuardResult.fail(
            f"the answer only repeats the question; what it repeats is from source "
            f"{source_id}, whose subject is {title!r}",
            "answer",
            patch=answer_patch(title, source_id),
        )
    return GuardResult.fail(
        "the answer only repeats the question; state the fact the question asks for, "
        "as the sources say it",
        "answer",
    )


async def subject(draft: Draft, judge: SupportJudge) -> GuardResult | None:
    found = asked_subject(draft.question, draft.sources) if draft.sources else None
    if found is None or set(terms(found[1])) & set(terms(draft.flat)):
        return None
    # The one source holding the quote (or whose description the question restates)
    # is the subject asked for, whatever the model guessed.
    source_id, title = found
    return GuardResult.fail(
        f"the question asks which subject this is; the quoted or described text is source "
        f"{source_id}'s, whose subject is {title!r}, not {draft.flat!r}",
        "answer",
        patch=answer_patch(title, source_id),
    )


async def supporting_source(
    answer: str, sources: Sources, judge: SupportJudge, question: str
) -> str | None:
    """The retrieved source that states `answer` as the answer to `question`, if one of
    the `REPAIR_CANDIDATES` best lexical matches does (by the run's own verification).
    With `--support off` nothing says a source supports anything: no repair."""
    if isinstance(judge, NoSupportCheck):
        return None
    flat = plain(answer)
    ranked = sorted(sources, key=lambda i: -lexical_support(flat, said_by(sources[i])))
    for source_id in ranked[:REPAIR_CANDIDATES]:
        verification = await verify_citations(flat, [source_id], sources, judge, question=question)
        if source_id in verification.verified:
            return source_id
    return None


def answer_from(pointer: tuple[str, str, str]) -> str:
    """The fix a verdict names for a question about a named source: what it says."""
    source_id, _, lead = pointer
    return f'says: "{lead}" Answer from what it says, citing {source_id}.'


def _off_the_named_source(draft: Draft, verified: Sequence[str]) -> GuardResult | None:
    """A short answer to a question that names a retrieved source by its title must be
    in that source, or in a source it names (the second hop): "Who directed the film
    The Jazz Singer?" -> "Billie Holiday [4]" is true of her article, which says
    "jazz singer", and the film's article does not say her name."""
    pointer = question_names(draft.question, draft.sources)
    if pointer is None or pointer[0] in verified or not is_short(draft.flat):
        return None
    if answer_kind(draft.question) == "list":
        return None  # a list's items may each be a source of their own (a maker's works)
    if any(bridges(draft.question, draft.sources).get(i) == pointer[0] for i in verified):
        return None
    named_title = set(terms(bare_title(pointer[1])))
    for i in verified:
        source = draft.sources[i]
        title = source.title if isinstance(source, Source) else ""
        if named_title <= set(terms(bare_title(title))):
            return None  # another article the question's name fits ("Apple Inc.", "Apple")
        if in_own_article(draft.flat, draft.question, source):
            return None  # the answer's own article states it ("... co-founded Microsoft")
    named = said_by(draft.sources[pointer[0]])
    if lexical_support(beyond(draft.flat, draft.question), named) >= 0.5:
        return None
    source_id, title, _ = pointer
    return GuardResult.fail(
        f"the question names {title!r}, and source {source_id}, about it, does not say "
        f"{draft.flat!r}; it {answer_from(pointer)}",
        "citations",
    )


def _unnamed(draft: Draft) -> GuardResult | None:
    """A verified answer that is a source's description without its name ("Japanese
    automotive manufacturer [2]" for a passage about Toyota): name it, unless the
    question names it already (then describing it answers), or the answer is a yes or
    no with the clause that decides it ("No: Dublin is the capital and largest city of
    Ireland [1]" reads like Belfast's "capital and largest city of Northern Ireland")."""
    if yes_or_no(draft.flat) is not None:
        return None
    unnamed = described_subject(set(terms(draft.flat)), draft.sources)
    if unnamed is None or set(terms(unnamed[1])) <= set(terms(draft.question)):
        return None
    source_id, title = unnamed
    return GuardResult.fail(
        f"the answer describes the subject of source {source_id} without naming it; "
        f"name it: {title!r}",
        "answer",
        patch=answer_patch(f"{title} ({draft.flat})", source_id),
    )


async def support(draft: Draft, judge: SupportJudge) -> GuardResult | None:
    if not draft.sources:
        return None
    ids = sorted(draft.sources, key=lambda i: int(i.strip("[]")))
    verification = await verify_citations(
        draft.value.answer, draft.value.citations, draft.sources, judge, question=draft.question
    )
    if verification.verified:
        wrong = _off_the_named_source(draft, verification.verified) or _unnamed(draft)
        if wrong is not None:
            return wrong
        # Extra bad ids are dropped and reported later; one verified citation is enough.
        return GuardResult.ok(
            "citations", score=len(verification.verified) / max(1, len(verification.cited))
        )
    found = await supporting_source(draft.value.answer, draft.sources, judge, draft.question)
    feedback = verification.feedback(ids[:8]) + _misread(draft)
    pointer = question_names(draft.question, draft.sources)
    if pointer is not None and pointer[0] not in verification.verified:
        # The fix, not only the failure: what the source the question names says.
        feedback += (
            f" The question names {pointer[1]!r}; source {pointer[0]} {answer_from(pointer)}"
        )
    # A right answer is not thrown away for a missing or wrong citation: cite the
    # retrieved source that states it (the step re-judges the repaired draft).
    patch = [{"op": "replace", "path": "/citations", "value": [found]}] if found else None
    return GuardResult.fail(feedback, "citations", patch=patch)


def _misread(draft: Draft) -> str:
    """Where a cited source holds the answer in a clause that answers something else
    ("1945" in "(died 1945)" for a birth year): say which clause, and what is asked."""
    relation = relation_words(draft.question)
    if not relation:
        return ""
    for source_id in draft.value.citations:
        source = draft.sources.get(source_id)
        if source is None:
            continue
        finding = find_answer(draft.value.answer, draft.question, source)
        if finding is not None and not finding.related:
            return (
                f' Source {source_id} has {draft.flat!r} only in "{finding.clause[:80]}", '
                f"which does not say {' or '.join(relation[:3])}: answer with what a source "
                f"says about {' '.join(relation[:3])}."
            )
    return ""


async def comparison(draft: Draft, judge: SupportJudge) -> GuardResult | None:
    """A yes/no comparison is decided by the two facts it compares ("Was A older than
    B?": A's birth year and B's). When the retrieved sources state both, the answer is
    what they give, with both facts cited (a patch: the model's "Yes" alone cannot be
    checked, and a 0.5B model compares two years badly); otherwise the numbers the
    answer itself states decide its yes or no."""
    picked = choice(draft.question)
    if answer_kind(draft.question) != "yesno" and picked is None:
        return None
    facts = comparison_facts(draft.question, draft.sources) if draft.sources else None
    if facts is not None and picked is not None:
        return _chosen(draft, decided(draft.question, facts), facts)
    if facts is not None:
        answer = decided(draft.question, facts)
        verdict = re.match(r"\W*(yes|no)\b", draft.flat, re.I)
        decides = answer.startswith("Yes")
        if verdict is not None and (verdict.group(1).lower() == "yes") == decides:
            stated = numbers_in(draft.flat)
            if all(numbers_in(f.number) <= stated for f in facts):
                return None  # its own yes or no, stating the two facts that decide it
        if plain(draft.value.answer).strip() == plain(answer).strip():
            return None
        return GuardResult.fail(
            f"the sources decide it: {answer}",
            "answer",
            patch=answer_patch(answer, *(f.source_id for f in facts)),
        )
    truth = compared(draft.question, draft.value.answer)
    if truth is None:
        return None
    said = "yes" if draft.flat.lower().lstrip(" \"'").startswith("yes") else "no"
    if (said == "yes") == truth:
        return None
    right = "Yes" if truth else "No"
    return GuardResult.fail(
        f"the numbers in your answer say {right}, not {said.capitalize()}: answer {right}, "
        "with the same sources",
        "answer",
    )


def _chosen(draft: Draft, answer: str, facts: tuple[Fact, Fact]) -> GuardResult | None:
    """ "Which is older, A or B?": a draft naming the side the facts pick, and not the
    other, goes on to the support check; any other is repaired to that side, with both
    facts cited."""
    winner = chosen_name(draft.question, facts)
    loser = next((f.name for f in facts if f.name != winner), "")
    # Its lead ("Plato: ...", "Plato [1]; ...") names the choice; the facts may follow.
    said = set(terms(re.split(r"[:;\[]", draft.flat, maxsplit=1)[0]))
    if set(terms(winner)) <= said and not (loser and set(terms(loser)) <= said):
        return None
    return GuardResult.fail(
        f"the sources decide it: {answer}",
        "answer",
        patch=answer_patch(answer, *(f.source_id for f in facts)),
    )


async def claim(draft: Draft, judge: SupportJudge) -> GuardResult | None:
    """A yes/no question stating one claim ("Is Paris the capital of France?") that a
    retrieved source decides (`claim_verdict`): a draft with the sources' yes or no
    goes on to the support check; any other is repaired to that yes or no with the
    clause that decides it, cited. Undecided claims are left to the other checks."""
    if not draft.sources:
        return None
    found = claim_verdict(draft.question, draft.sources)
    if found is None:
        return None
    right = "Yes" if found.truth else "No"
    if (yes_or_no(draft.flat) or "").capitalize() == right:
        return None
    source = draft.sources[found.source_id]
    title = bare_title(source.title) if isinstance(source, Source) else ""
    clause = found.clause
    if title and not set(terms(title)) <= set(terms(clause)):
        clause = f"{title}: {clause}"
    answer = f"{right}: {clause} {found.source_id}"
    return GuardResult.fail(
        f"the sources decide it: source {found.source_id} says {found.clause!r}; answer {right}",
        "answer",
        patch=answer_patch(answer, found.source_id),
    )


async def hop(draft: Draft, judge: SupportJudge) -> GuardResult | None:
    """A two-hop question's year or number ("When was the painter of Guernica born?") is
    the one the second hop's source gives for the asked relation (evidence.hop_value:
    "born 1881" in the article Guernica's names), not the first hop's own ("1937"):
    repaired to it, cited. Left to the other checks when the hops give no one value."""
    if isinstance(judge, NoSupportCheck) or not draft.sources:
        return None  # with `--support off` nothing says what a source supports
    found = hop_value(draft.question, draft.sources)
    if found is None:
        return None
    source_id, value, clause = found
    if value.split()[0] in numbers_in(draft.flat):
        return None
    lead = f"the question asks about what its subject's source names; source {source_id}"
    return _from_source(lead, source_id, clause, value)


def _from_source(lead: str, source_id: str, clause: str, answer: str) -> GuardResult:
    """A repair to the answer a source's clause gives, the clause quoted, it cited."""
    return GuardResult.fail(
        f'{lead} says "{cut(clause, 160)}": the answer is {answer}',
        "answer",
        patch=answer_patch(f"{answer} {source_id}", source_id),
    )


async def span(draft: Draft, judge: SupportJudge) -> GuardResult | None:
    """A year asked as a start or an end that is the other end of a span a source about
    the subject gives (evidence.other_end: "705" for "When did Wu Zetian become Empress
    of China?" from "Empress of China from 690 to 705"): repaired to the asked end."""
    if isinstance(judge, NoSupportCheck) or not draft.sources:
        return None  # with `--support off` nothing says what a source supports
    found = other_end(draft.flat, draft.question, draft.sources)
    if found is None:
        return None
    source_id, year, clause = found
    lead = f"the question asks for the span's other end, not {draft.flat}; source {source_id}"
    return _from_source(lead, source_id, clause, year)


async def made_by(draft: Draft, judge: SupportJudge) -> GuardResult | None:
    """A "who made it" question ("Who founded Toyota?") is answered by the name its
    subject's own source gives after the relation (evidence.maker: "It was founded by
    Kiichiro Toyoda"): an answer that shares no word with it is repaired to it, cited."""
    if isinstance(judge, NoSupportCheck) or not draft.sources:
        return None  # with `--support off` nothing says what a source supports
    found = maker(draft.question, draft.sources)
    if found is None:
        return None
    source_id, name, clause = found
    # A surname that is a stop word is a word of the answer where a source names it so.
    said = set(terms(draft.flat)) | {w.lower() for w in named_stopwords(draft.flat, draft.sources)}
    if set(terms(name)) & said or {w.lower() for w in name.split()} & said:
        return None
    return _from_source(
        f"source {source_id}, about what the question names,", source_id, clause, name
    )


async def listed(draft: Draft, judge: SupportJudge) -> GuardResult | None:
    """A list question ("Name two countries that border Moldova") is answered by as
    many items as it asks for, each one the sources name in the question's relation to
    the subject. Judged only where the retrieved sources name such items. A draft with
    too few is repaired to as many as asked, the draft's own valid items first, then the
    sources' in the order they name them, each with its source; the verdict quotes what
    the sources say."""
    if answer_kind(draft.question) != "list" or not draft.sources:
        return None
    candidates = list_candidates(draft.question, draft.sources)
    need = list_size(draft.question)
    named = items_named(draft.value.answer, candidates)
    if not candidates or len(named) >= need:
        return None
    quoted = " ".join(
        f'Source {source_id} says: "{cut(clause, 200)}"'
        for source_id, clause in list_evidence(draft.question, draft.sources)[:3]
    )
    feedback = (
        f"the question asks for {need}, each named by the sources as the question asks; "
        f"{quoted} Answer with {need} of the names they give, each with its source id."
    )
    if len(candidates) < need:
        return GuardResult.fail(feedback, "answer")
    chosen = (named + [c for c in candidates if c not in named])[:need]
    return GuardResult.fail(feedback, "answer", patch=answer_patch_items(chosen))


def answer_patch_items(items: Sequence[tuple[str, str]]) -> list[dict[str, object]]:
    """The JSON Patch of a list answer: "Romania and Ukraine [1]", each source cited."""
    names = [name for _, name in items]
    said = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    ids = list(dict.fromkeys(source_id for source_id, _ in items))
    return answer_patch(f"{said} {' '.join(ids)}", *ids)


CHECKS: Sequence[tuple[str, Check]] = (
    ("instructions", instructions),
    # Two retrieved facts decide a comparison: before a bare "No" reads as an echo, or a
    # bare "Yes" is sent back for the facts.
    ("comparison", comparison),
    # A yes/no question's one claim, decided by the clause of a source that states it.
    ("claim", claim),
    # A list is judged by the items the sources name before an echo is: a draft that
    # names only the subject ("Saudi Arabia") is repaired to the items, not refused.
    ("list", listed),
    # A second hop's year or number, before a first hop's year passes as a year.
    ("hop", hop),
    # Who made what the question names: the name its own source gives after the relation.
    ("maker", made_by),
    # A year asked as a start or an end: the asked end of the subject's span.
    ("span", span),
    # An echo or a subject question is repaired to a source's title before its form is
    # judged: "capital telangana" for "Which subject is described as: Capital of
    # Telangana?" becomes "Hyderabad", a name of the form asked.
    ("echo", echo),
    ("subject", subject),
    ("form", form),
    ("support", support),
)


async def judge_draft(draft: Draft, judge: SupportJudge) -> GuardResult:
    """The first failing check's verdict, or the support check's pass."""
    for _, check in CHECKS:
        verdict = await check(draft, judge)
        if verdict is not None and not verdict.passed:
            return verdict
        if verdict is not None and check is support:
            return verdict
    return GuardResult.ok("citations")
