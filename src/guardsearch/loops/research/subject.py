"""Which subject a question asks about, when code can tell from the retrieved sources.

A small model asked "Which subject is described as: Seat of government of Bolivia?" or
'Which subject is this about: "It was founded by Kiichiro Toyoda ..."?' copies the
question back, names a category ("Birds" for a quote from Cuckoo), or guesses. The
sources say more: a source's short description says what its subject is, and a quoted
passage that one retrieved source's text holds says which article it comes from. The
synthesis guard (phases.py) uses these to repair a draft to that source's title.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from guardsearch.core.source import Source
from guardsearch.corpus.query import terms
from guardsearch.loops.research.citations import cut, sentences

# An answer restates a source's description when it holds at least this share of the
# description's content words (years included) and adds none beyond the question's.
DESCRIPTION_MATCH = 0.6
# ... and is mostly that description (Jaccard): a long answer that shares a few of a
# description's words ("capital", "city", "state") does not restate it.
CLOSE_MATCH = 0.5


def described_subject(
    words: set[str],
    sources: Mapping[str, str] | Mapping[str, Source] | Mapping[str, str | Source],
    question: str | None = None,
) -> tuple[str, str] | None:
    """The (id, title) of the one retrieved source whose short description `words`
    restate, if exactly one does best: a source's description says what its subject
    is, so an answer that only repeats it names that subject by its title.

    A description qualifies when `words` hold `DESCRIPTION_MATCH` of its content words
    and the two are `CLOSE_MATCH` alike (Jaccard); the best is the closest, so
    "Japanese and Okinawan martial art" names Karate, not Jujutsu ("Japanese martial
    art"). With `question`, the question's words must cover that same source's
    description best. None when no source has a description, none qualifies, or two
    match equally well."""
    described = {
        source_id: (source, terms_)
        for source_id, source in sources.items()
        if isinstance(source, Source) and (terms_ := set(terms(source.description)))
    }
    scored = []
    for source_id, (source, terms_) in described.items():
        if set(terms(source.title)) <= words:
            continue
        shared = len(words & terms_)
        closeness = shared / len(words | terms_)
        if shared / len(terms_) >= DESCRIPTION_MATCH and closeness >= CLOSE_MATCH:
            scored.append((closeness, source_id))
    best = _unique_best(scored)
    if best is None:
        return None
    if question is not None:
        # The answer only repeats the question, so the question must point at the same
        # source: "organic compound" alone is closer to Ethane than to Acetone.
        # Ties on coverage go to the closer description: "Japanese and Okinawan martial
        # art" covers Jujutsu's "Japanese martial art" too, and is closer to Karate's.
        asked = set(terms(question))
        covered = [
            ((len(asked & t) / len(t), len(asked & t) / len(asked | t)), i)
            for i, (_, t) in described.items()
        ]
        if _unique_best(covered) != best:
            return None
    return best, described[best][0].title


# A passage the question quotes ("Which subject is this about: \"...\"?"): long enough
# that finding it in a source's text says which article it comes from.
_QUOTED = re.compile(r"[\"“]([^\"“”]{20,})[\"”]")


def _flat(text: str) -> str:
    """`text`'s words, lower case, one space apart."""
    return _words(text.lower())


def _holders(
    passage: str,
    sources: Mapping[str, str] | Mapping[str, Source] | Mapping[str, str | Source],
) -> list[tuple[str, str]]:
    """(id, title) of every retrieved source whose text holds `passage` (words only)."""
    wanted = _flat(passage)
    return [
        (source_id, source.title)
        for source_id, source in sources.items()
        if isinstance(source, Source) and wanted in _flat(source.text)
    ]


def quoted_source(
    words: set[str],
    sources: Mapping[str, str] | Mapping[str, Source] | Mapping[str, str | Source],
    question: str,
) -> tuple[str, str] | None:
    """The (id, title) of the one retrieved source whose text holds the passage the
    question quotes, when `words` (an answer that only repeats the question) are words
    of that passage: asked what a quoted sentence is about, the small model copies the
    sentence back, and the article the sentence is from names its subject. None when
    the question quotes nothing, the answer repeats other words, or no source or two
    sources hold the passage."""
    return _quote_holder(
        question, sources, lambda passage: bool(words) and words <= set(terms(passage))
    )


def _quote_holder(
    question: str,
    sources: Mapping[str, str] | Mapping[str, Source] | Mapping[str, str | Source],
    fits: Callable[[str], bool] = lambda passage: True,
) -> tuple[str, str] | None:
    """The (id, title) of the one source holding the first passage the question quotes
    that `fits` and exactly one retrieved source holds."""
    for passage in _QUOTED.findall(question):
        if fits(passage):
            holders = _holders(passage, sources)
            if len(holders) == 1:
                return holders[0]
    return None


# A question that asks which subject a description or a passage is about, rather than a
# fact about a subject it names: "Which subject is described as: ...?", "Which person
# is this about: ...?", "What is this passage about: ...?", "Who or what is ...?".
_ASKS_SUBJECT = re.compile(
    r"\b(?:which|what)\s+(?:subject|topic|article|person|people|place|thing|entity)\b"
    r"|\bwhat\s+is\s+this\s+(?:\w+\s+)?about\b"
    r"|\bwho\s+or\s+what\b",
    re.IGNORECASE,
)


def asks_for_subject(question: str) -> bool:
    """Whether `question` asks which subject something is (see `_ASKS_SUBJECT`)."""
    return _ASKS_SUBJECT.search(question) is not None


def asked_subject(
    question: str,
    sources: Mapping[str, str] | Mapping[str, Source] | Mapping[str, str | Source],
) -> tuple[str, str] | None:
    """The (id, title) of the retrieved source a subject question is about, when the
    sources settle it: the one source whose text holds the passage the question quotes,
    else the one source whose description the question restates (`described_subject`
    on the question's words). None for any other question, when no source or two
    sources qualify, or when the question already names the subject's title (an answer
    naming it would only repeat the question)."""
    if not asks_for_subject(question):
        return None
    asked = set(terms(question))
    found = _quote_holder(question, sources) or described_subject(asked, sources)
    if found is None or set(terms(found[1])) <= asked:
        return None
    return found


def _unique_best(scored: Sequence[tuple[Any, str]]) -> str | None:
    """The id with the highest score, None when there is none or two share it."""
    ranked = sorted(scored, reverse=True)
    if not ranked or (len(ranked) > 1 and ranked[1][0] == ranked[0][0]):
        return None
    return ranked[0][1]


# The start of a named source's text that feedback quotes (its first sentence, cut).
LEAD_CHARS = 200


def named_source(
    question: str,
    sources: Mapping[str, str] | Mapping[str, Source] | Mapping[str, str | Source],
) -> tuple[str, str, str] | None:
    """(id, title, lead) of the retrieved source the question names by its title ("Who
    composed the opera Don Giovanni?" names the source titled "Don Giovanni"), with
    the first sentence of its text: what a rejected answer's feedback points the model
    at. The title must stand in the question as written, capitals included: "Rabat is
    the capital of which country?" names Rabat, not "Capital (economics)". The longest
    title named wins; None when none is, or two are named alike."""
    asked = f" {_words(question)} "
    titled = {
        source_id: (source, _words(_bare(source.title)))
        for source_id, source in sources.items()
        if isinstance(source, Source)
    }
    named = [
        (len(title), source_id, source)
        for source_id, (source, title) in titled.items()
        if title and f" {title} " in asked
    ]
    if not named:
        return None
    named.sort(key=lambda n: -n[0])
    if len(named) > 1 and named[1][0] == named[0][0]:
        return None
    _, source_id, source = named[0]
    lead = sentences(source.text)[0] if source.text.strip() else source.description
    return source_id, source.title, cut(lead, LEAD_CHARS)


def _words(text: str) -> str:
    """`text`'s words, capitals kept, one space apart."""
    return " ".join(re.findall(r"\w+", text))


def _bare(title: str) -> str:
    """A title without its trailing parenthesis ("Guernica (Picasso)" -> "Guernica")."""
    return re.sub(r"\s*\([^)]*\)$", "", title)


def question_names(
    question: str,
    sources: Mapping[str, str] | Mapping[str, Source] | Mapping[str, str | Source],
) -> tuple[str, str, str] | None:
    """`named_source` for a question about a named subject; None for a subject question
    (it names other things on the way: "King of Scotland from 1567 ..." names Scotland)."""
    return None if asks_for_subject(question) else named_source(question, sources)
