"""Whether a source states an answer *as the answer to this question*, for any answer type.

A question names a subject ("Heinrich Himmler"), a relation ("die") and the kind of
answer it wants (a year). A source supports an answer when

1. it is about the subject (most of the question's capitalised words), or it is a
   *bridge*: a source whose title a subject source names ("Psycho ... directed by
   Alfred Hitchcock" makes "Alfred Hitchcock" the bridge of a two-hop question);
2. the answer's own content (what it adds to the question: a year, a name, a number)
   is in the source, numbers exactly;
3. the clause that holds it carries the question's relation, by its word or a word of
   the same family ("died", "death"; "director", "directed"; "population", "people",
   "inhabitants"). Wikipedia's own lifespan "(1900–1945)" reads as "born 1900; died
   1945", so 1945 answers when Himmler died and not when he was born.

Nothing here is keyed on a question's wording: the question is read for its form (what
kind of answer an interrogative asks for), its capitalised names and its content words;
the relation families are a lexicon of words, not of questions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from guardsearch.core.source import Source
from guardsearch.corpus.query import terms

# -- the kind of answer a question asks for -------------------------------------------

_YEAR_Q = re.compile(r"\b(?:what|which)\s+year\b|\bwhen\b|\bbirth\s+year\b|\bwhat\s+date\b", re.I)
_NUMBER_Q = re.compile(
    r"\bhow\s+(?:many|much|long|tall|high|deep|far|big|large|wide|old|heavy)\b"
    r"|\b(?:population|length|height|depth|area|number\s+of)\b",
    re.I,
)
_PERSON_Q = re.compile(
    r"^\W*(?:who|whom|whose)\b|\bwhich\s+(?:person|artist|writer|author|composer|painter|director|poet|playwright|sculptor|scientist)\b",
    re.I,
)
_PLACE_Q = re.compile(
    r"^\W*where\b|\b(?:which|what)\s+(?:country|city|town|state|region|continent|place)\b|\bcapital\b",
    re.I,
)
_YESNO_Q = re.compile(
    r"^\W*(?:is|was|were|are|did|does|do|has|have|had|can|could|will|would)\b", re.I
)
_LIST_Q = re.compile(
    r"^\W*(?:name|list)\s+(?:two|three|four|five|some|several|\d)\b|\bname\s+(?:two|three|four|five)\b",
    re.I,
)
_DEFINE_Q = re.compile(
    r"^\W*(?:what\s+(?:is|are|was)\s+(?:an?\s+|the\s+)?(?P<thing>[\w'’.-]+(?:\s+[\w'’.-]+){0,3})\?"
    r"|tell\s+me\s+what\b|explain\b|describe\b)",
    re.I,
)
_COUNT_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5}

ANSWER_KINDS = ("year", "number", "person", "place", "yesno", "list", "definition", "entity")


def answer_kind(question: str) -> str:
    """What kind of answer `question` asks for, from its interrogative form."""
    q = question.strip()
    if _LIST_Q.search(q):
        return "list"
    if _YESNO_Q.search(q):
        return "yesno"
    if _YEAR_Q.search(q):
        return "year"
    if _NUMBER_Q.search(q):
        return "number"
    if _PERSON_Q.search(q):
        return "person"
    if _PLACE_Q.search(q):
        return "place"
    define = _DEFINE_Q.search(q)
    if define and not re.search(r"\b(?:of|by|in|from)\b", define.group("thing") or ""):
        return "definition"
    return "entity"


def list_size(question: str) -> int:
    """How many items a list question asks for ("Name two ..." -> 2); 1 otherwise."""
    for word, n in _COUNT_WORDS.items():
        if re.search(rf"\b{word}\b", question, re.I):
            return n
    digits = re.search(r"\b([2-9])\b", question)
    return int(digits.group(1)) if digits else 1


def fits_kind(answer: str, kind: str) -> str | None:
    """None when `answer` has the form `kind` asks for; else what is wrong, in words
    the model can act on."""
    text = answer.strip()
    if kind == "year" and not re.search(r"\b\d{3,4}\b", text):
        return "the question asks for a year: give the year the sources state"
    if kind == "number" and not re.search(r"\d", text):
        return "the question asks for a number: give the number the sources state, with its unit"
    if kind == "yesno" and not re.match(r"^\W*(?:yes|no)\b", text, re.I):
        return 'the question asks yes or no: start the answer with "Yes" or "No", then say why'
    if kind in ("person", "place") and not re.search(r"\b[A-Z]", _without_markers(text)):
        return f"the question asks for a {kind}: name it as the sources do"
    return None


# -- words ---------------------------------------------------------------------------

# Families of words that state the same relation. A question's relation word matches a
# source clause holding any word of its family (after stemming).
_FAMILIES: tuple[frozenset[str], ...] = tuple(
    frozenset(words.split())
    for words in (
        "born birth birthday older younger age",
        "die died dies death dead passed deceased killed executed",
        "found founded founder founding establish established establishment formed created set",
        "build built construct constructed construction completed erected",
        "publish published publication release released came appeared _by",
        "premiere premiered premieres performed",
        "reign reigned ruled rule ruler king queen emperor empress pharaoh sultan tsar shah "
        "monarch",
        "population people inhabitants residents live lives populated",
        "long length",
        "tall height high elevation",
        "deep depth",
        "area square",
        "direct directed director directing _by",
        "write wrote written writer author authored novelist poet playwright _by",
        "paint painted painter painting _by",
        "compose composed composer music _by",
        "headquarters headquartered based",
        "border borders bordered neighbour neighbours neighbor neighbors",
        "discover discovered discoverer discovery",
        "invent invented inventor invention",
        "design designed designer architect",
        "record recorded recording sang sing singer sung perform performed performer _by",
        "make made makes create created creator produce produced producer _by",
        "capital",
        "locate located lies situated where _in",
    )
)
# Words that name the kind of answer, not the relation ("In which *country* is X?").
_KIND_WORDS = frozenset(
    " ".join(
        (
            "year date when country city town place state region person people who what which",
            "number many much title name called kind type thing first one two three four five",
            "answer briefly tell explain describe sentence also famous most begin start end",
            "become last subject topic article passage described about",
            # what the subject is, not what is asked of it ("the *film* Psycho")
            "film movie novel book painting opera play poem song album symphony ballet",
            "sculpture work piece river lake mountain company organisation organization",
            "firm body",
        )
    ).split()
)
_SUFFIXES = ("ations", "ation", "ings", "ing", "edly", "ers", "er", "ors", "or", "ed", "es", "s")


def stem(word: str) -> str:
    word = word.lower().strip("'’")
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


_FAMILY_OF: dict[str, int] = {}
for _index, _family in enumerate(_FAMILIES):
    for _word in _family:
        _FAMILY_OF.setdefault(stem(_word), _index)


def family(word: str) -> frozenset[str]:
    """The stems that state the same relation as `word` (itself alone if none)."""
    index = _FAMILY_OF.get(stem(word))
    if index is None:
        return frozenset({stem(word)})
    return frozenset(stem(w) for w in _FAMILIES[index])


# A capitalised word, in any script's capitals ("İzmir", "Łódź", "Émile").
_PROPER = re.compile(r"\b(?=[^\W\d_])(?:[A-Z]|[^\x00-\x7f])[\w'’.-]*")
_MARKER = re.compile(r"\[\s*\d{1,3}\s*\]")


def _without_markers(text: str) -> str:
    return _MARKER.sub(" ", text)


def subject_words(question: str) -> list[str]:
    """The question's named subject: its capitalised words after the first (the first
    word of a sentence is capitalised whatever it is), as search terms."""
    words = [w for w in _PROPER.findall(question) if w[0].isupper()]
    first = re.match(r"\W*(\w[\w'’.-]*)", question)
    if (
        first
        and words
        and words[0] == first.group(1)
        and first.group(1).lower()
        in _KIND_WORDS
        | {
            "in",
            "on",
            "at",
            "how",
            "where",
            "was",
            "is",
            "did",
            "does",
            "name",
            "list",
            "the",
        }
    ):
        words = words[1:]
    return terms(" ".join(words))


def relation_words(question: str) -> list[str]:
    """The question's content words that say what it asks about the subject: not the
    subject's words, not words naming the kind of answer."""
    subject = {stem(w) for w in subject_words(question)}
    # A quoted passage is what the question shows, not what it asks about.
    unquoted = re.sub(r"[\"“][^\"“”]*[\"”]", " ", question)
    return [
        w
        for w in terms(unquoted)
        if not w.isdigit() and stem(w) not in subject and w not in _KIND_WORDS
    ]


# -- sources -------------------------------------------------------------------------

_LIFESPAN = re.compile(r"\((?:born\s+)?(c\.\s*)?(\d{3,4})\s*[–-]\s*(c\.\s*)?(\d{3,4})\)")


def readable(text: str) -> str:
    """`text` with Wikipedia's lifespan convention spelled out: "(1900–1945)" reads
    "(born 1900; died 1945)"."""
    return _LIFESPAN.sub(lambda m: f"(born {m.group(2)}; died {m.group(4)})", text)


def source_says(source: str | Source) -> str:
    """All a source says, readable: its title with its description as one statement
    ("Swan Lake (1877 ballet by Pyotr Ilyich Tchaikovsky)": the description says what
    the titled subject is), then its text."""
    if isinstance(source, str):
        return readable(source)
    title, description = source.title.strip().rstrip("."), source.description.strip().rstrip(".")
    head = f"{title} ({description})" if title and description else title or description
    return readable(f"{head}. {source.text}" if head else source.text)


# Clause ends: a sentence's end (not an initial's: "T. S. Eliot"), a semicolon, a dash,
# a comma before a new clause.
_CLAUSE = re.compile(
    r"(?<!\b[A-Z]\.)(?<=[.!?;])\s+|;|\s[–—]\s|,\s(?=(?:and|but|while|which|who|where)\b)"
)


def clauses(text: str) -> list[str]:
    return [c.strip() for c in _CLAUSE.split(text) if c and c.strip()]


_NUMBER = re.compile(r"\d[\d,.]*\d|\d")


def numbers_in(text: str) -> set[str]:
    return {n.replace(",", "").rstrip(".") for n in _NUMBER.findall(text)}


def _stems(text: str) -> set[str]:
    """`text`'s word stems; "_by" stands for a maker's "by" ("Painting by Georges Seurat":
    `terms` drops "by" as a stopword, and it is how a description names who made a work)."""
    out = {stem(w) for w in terms(text)}
    if re.search(r"\bby\s+[A-Z]", text):
        out.add("_by")
    if re.search(r"\b(?:in|of)\s+(?:[\w-]+\s+)?[A-Z]", text):
        out.add("_in")  # "a city in southeastern Peru": where it is
    return out


def _content(answer: str, question: str) -> tuple[set[str], list[str]]:
    """What the answer adds to the question: its numbers, and its words that are not the
    question's (stemmed)."""
    asked = _stems(question)
    flat = _without_markers(answer)
    words = [
        stem(w)
        for w in terms(flat)
        if not w.isdigit() and stem(w) not in asked and w not in ("yes", "no")
    ]
    return numbers_in(flat), words


@dataclass(frozen=True)
class AnswerClause:
    """Where a source states an answer: the clause; whether it carries one of the
    question's relations (`related`), and every relation the lexicon knows (`complete`:
    "the director of Psycho ... born" needs both in one clause of Psycho's own article)."""

    clause: str
    related: bool
    complete: bool = True


def _relations(question: str) -> tuple[list[frozenset[str]], list[frozenset[str]]]:
    """The question's relation families: all of them, and the ones the lexicon knows."""
    words = relation_words(question)
    return [family(w) for w in words], [family(w) for w in words if stem(w) in _FAMILY_OF]


def _judge(
    clause_stems: set[str], question: str, satisfied: set[str] | frozenset[str] = frozenset()
) -> tuple[bool, bool]:
    """(related, complete) of a clause; relations `satisfied` already states (the first
    hop's source, for a bridge) are not asked of it again."""
    every, known = _relations(question)
    if satisfied:
        left = [f for f in every if not satisfied & f]
        every = left or every
        known = [f for f in known if not satisfied & f] or known
    related = not every or any(clause_stems & f for f in every)
    complete = all(clause_stems & f for f in known)
    return related, complete


def find_answer(
    answer: str, question: str, source: str | Source, *, satisfied: str | Source = ""
) -> AnswerClause | None:
    """The clause of `source` stating `answer` (its numbers all, and most of its added
    words), preferring one that carries the question's relation; None if none states it."""
    numbers, words = _content(answer, question)
    if not numbers and not words:
        return None
    said = source_says(source)
    vocabulary = _stems(said)
    done = _stems(source_says(satisfied)) if satisfied else set()
    if words and sum(1 for w in words if w in vocabulary) / len(words) < 0.5:
        return None
    best: AnswerClause | None = None
    pieces = clauses(said)
    for clause in pieces:
        here = numbers_in(clause)
        if numbers and not numbers <= here:
            continue
        clause_stems = _stems(clause)
        if not numbers and words and not any(w in clause_stems for w in words):
            continue
        related, complete = _judge(clause_stems, question, done)
        if related and complete:
            return AnswerClause(clause, True, True)
        if best is None or (related and not best.related):
            best = AnswerClause(clause, related, complete)
    if best is None and not numbers:
        # Words spread over a sentence ("Uganda ... and Kenya"): the source as a whole.
        related, complete = _judge(vocabulary, question, done)
        return AnswerClause(said[:200], related, complete)
    return best


_TYPED = {
    "year": re.compile(r"\b\d{3,4}\b"),
    "number": re.compile(r"\d"),
}


def answer_clauses(
    question: str, sources: Mapping[str, Source] | Mapping[str, str | Source]
) -> list[tuple[str, str]]:
    """(id, clause) of the clauses that could answer `question` from what was retrieved:
    in a source about its subject, a clause carrying every relation the question asks
    (with a year for a year, a number for a number, a name for a name); in a source a
    subject source names (a bridge), a clause carrying one of them. Empty when the
    retrieved sources hold no such clause: the run should search further (the bridge's
    name), or say the sources do not say."""
    kind = answer_kind(question)
    typed = _TYPED.get(kind)
    asked = _stems(question)
    linked = bridges(question, sources)
    out: list[tuple[str, str]] = []
    for source_id, source in sources.items():
        subject = about(question, source)
        if not subject and source_id not in linked:
            continue
        if kind in ("definition", "list", "yesno"):
            out.append((source_id, ""))
            continue
        for clause in clauses(source_says(source)):
            if typed is not None and not typed.search(clause):
                continue
            if typed is None and not any(
                stem(w) not in asked for w in terms(" ".join(_PROPER.findall(clause)))
            ):
                continue
            hop = linked.get(source_id)
            done = _stems(source_says(sources[hop])) if hop is not None else set()
            related, complete = _judge(_stems(clause), question, done)
            if related and complete:
                out.append((source_id, clause))
    return out


_LESS = re.compile(r"\b(?:before|earlier|older|sooner|shorter|smaller|fewer|less|lower)\b", re.I)
_MORE = re.compile(
    r"\b(?:after|later|younger|longer|taller|larger|bigger|more|higher|deeper|greater)\b", re.I
)
_NAME_GROUP = re.compile(
    r"\b[A-Z][\w'’.-]*(?:\s+(?:(?:of|de|da|von|van|der|the|la|le|del|di|du)\s+)*[A-Z][\w'’.-]*)*"
)


def comparative(question: str) -> bool:
    """Does `question` compare two things one way ("before", "older", "taller")?"""
    return (_LESS.search(question) is None) != (_MORE.search(question) is None)


def compared(question: str, answer: str) -> bool | None:
    """The yes/no a comparison question ("Was A born before B?") gets from the two
    numbers the answer states for A and for B, in the direction its comparative word
    gives; None when the question compares nothing or the answer does not give one
    number for each."""
    less, more = _LESS.search(question), _MORE.search(question)
    if (less is None) == (more is None):
        return None
    names = [g.strip() for g in _NAME_GROUP.findall(question[1:]) if terms(g)]
    if len(names) < 2:
        return None
    values: dict[int, float] = {}
    for piece in re.split(r"\[\s*\d{1,3}\s*\]|;|\.\s|,\s|\sand\s", answer):
        found = re.findall(r"\b\d{3,4}\b|\d[\d,]*(?:\.\d+)?", piece)
        for k, name in enumerate(names[:2]):
            if found and set(terms(name)) & set(terms(piece)) and k not in values:
                values[k] = float(found[0].replace(",", ""))
                break
    if len(values) < 2:
        return None
    return values[0] < values[1] if less else values[0] > values[1]


def relation_in(question: str, source: str | Source) -> bool:
    """Does `source` word any of the question's relations anywhere?"""
    said = _stems(source_says(source))
    return any(said & family(w) for w in relation_words(question))


def about(question: str, source: str | Source) -> bool:
    """Is `source` about the question's named subject (most of its words), or, when
    the question names two ("Was A born before B?"), about one of them?"""
    subject = subject_words(question)
    if not subject:
        return True
    said = _stems(source_says(source))

    def covered(words: Sequence[str]) -> bool:
        return bool(words) and sum(1 for w in words if stem(w) in said) / len(words) > 0.5

    groups = [terms(g) for g in _NAME_GROUP.findall(question[1:]) if terms(g)]
    return covered(subject) or (len(groups) > 1 and any(covered(g) for g in groups))


def bridges(
    question: str, sources: Mapping[str, Source] | Mapping[str, str | Source]
) -> dict[str, str]:
    """id -> the id of the subject source that names it: sources about something a
    subject source names (its title appears in that source's description or text)."""
    subject_ids = [i for i, s in sources.items() if about(question, s)]
    out: dict[str, str] = {}
    for i, s in sources.items():
        if not isinstance(s, Source) or not s.title.strip():
            continue
        name = re.sub(r"\s*\([^)]*\)$", "", s.title)
        if re.search(rf"\b{re.escape(name)}\b", question):
            continue  # what the question names is the first hop, never the second
        # (A source about the subject can be a bridge too: Mary Shelley's article names
        # Frankenstein, and Frankenstein's names her.)
        for j in (j for j in subject_ids if j != i):
            holder = sources[j]
            said = source_says(holder)
            if len(name) > 2 and re.search(rf"\b{re.escape(name)}\b", said):
                out[i] = j
                break
    return out


def states(
    answer: str,
    question: str,
    source_id: str,
    sources: Mapping[str, Source] | Mapping[str, str | Source],
) -> AnswerClause | None:
    """Does source `source_id` state `answer` as the answer to `question`? The AnswerClause
    (with `related` True) if it is about the subject or a bridge and a clause of it
    holds the answer with the question's relation."""
    source = sources[source_id]
    if not about(question, source) and source_id not in bridges(question, sources):
        return None
    return find_answer(answer, question, source)


def named_entities(source: str | Source, question: str, limit: int = 3) -> list[str]:
    """Names a subject source mentions that the question does not: the next hop's
    queries ("Psycho ... directed by Alfred Hitchcock" -> "Alfred Hitchcock"), the ones
    near the question's relation words first."""
    asked = _stems(question)
    relation = [family(w) for w in relation_words(question)]
    found: list[tuple[int, str]] = []
    text = source_says(source)
    body = source if isinstance(source, str) else f"{source.description}. {source.text}"
    for order, clause in enumerate(clauses(body)[:8]):
        near = bool(relation) and any(_stems(clause) & f for f in relation)
        for match in re.finditer(
            r"[A-Z][\w'’.-]+(?:\s+(?:of\s+|de\s+|von\s+|van\s+)?[A-Z][\w'’.-]+)*", clause
        ):
            name = match.group(0).strip(".")
            if not terms(name) or all(stem(w) in asked for w in terms(name)):
                continue
            if name.split()[0].lower() in (
                "the",
                "a",
                "an",
                "it",
                "its",
                "he",
                "she",
                "his",
                "her",
                "in",
                "on",
            ):
                continue
            if name in text:
                found.append((0 if near else 1 + order, name))
    ranked: list[str] = []
    for _, name in sorted(found, key=lambda f: f[0]):
        if name not in ranked:
            ranked.append(name)
    return ranked[:limit]


def answer_in_sources(answer: str, question: str, texts: Iterable[str | Source]) -> bool:
    """Does any source hold the answer's content at all (relation or not)?"""
    return any(find_answer(answer, question, t) is not None for t in texts)


def list_items(answer: str) -> list[str]:
    """The items a list answer names ("Uganda, Kenya and Malawi [1]")."""
    flat = _without_markers(answer).strip().rstrip(".")
    flat = re.sub(r"^(?:the\s+)?(?:[\w\s]+?\s(?:are|is|include|includes)\s)", "", flat, flags=re.I)
    parts = re.split(r",\s*|\s+and\s+|;\s*", flat)
    return [p.strip() for p in parts if p.strip()]


__all__: Sequence[str] = (
    "ANSWER_KINDS",
    "AnswerClause",
    "about",
    "answer_in_sources",
    "answer_kind",
    "bridges",
    "clauses",
    "comparative",
    "compared",
    "family",
    "find_answer",
    "fits_kind",
    "list_items",
    "list_size",
    "named_entities",
    "readable",
    "relation_in",
    "relation_words",
    "source_says",
    "states",
    "subject_words",
)
