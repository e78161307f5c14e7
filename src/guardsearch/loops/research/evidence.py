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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import simplemma

from guardsearch.core.source import Source
from guardsearch.corpus.query import STOPWORDS, terms

# -- the kind of answer a question asks for -------------------------------------------

_YEAR_Q = re.compile(r"\b(?:what|which)\s+year\b|\bwhen\b|\bbirth\s+year\b|\bwhat\s+date\b", re.I)
_NUMBER_Q = re.compile(
    r"\bhow\s+(?:many|much|long|tall|high|deep|far|big|large|wide|old|heavy)\b"
    r"|\b(?:population|length|height|depth|area|width|elevation|altitude|diameter|volume"
    r"|weight|mass|distance|rainfall|precipitation|temperature|density|number\s+of)\b",
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
    if re.match(
        r"\W*how\s+(?:many|much|long|tall|high|deep|far|big|large|wide|old|heavy)\b", q, re.I
    ):
        return "number"  # "How old was Mozart when he died?": an age, not a year
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


_YES_OR_NO = re.compile(r"^\W*(yes|no)\b|[:–—]\s*(yes|no)\b", re.I)


def yes_or_no(answer: str) -> str | None:
    """ "yes" or "no" when the answer leads with one ("No, ...", "Brahms: yes"); else None."""
    found = _YES_OR_NO.search(_without_markers(answer))
    return (found.group(1) or found.group(2)).lower() if found else None


def fits_kind(answer: str, kind: str) -> str | None:
    """None when `answer` has the form `kind` asks for; else what is wrong, in words
    the model can act on."""
    text = answer.strip()
    if kind == "year" and not re.search(r"\b\d{3,4}\b", text):
        return "the question asks for a year: give the year the sources state"
    if kind == "number" and not re.search(r"\d", text):
        return "the question asks for a number: give the number the sources state, with its unit"
    if kind == "yesno" and yes_or_no(text) is None:
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
        "born birth older younger age",
        "die died dies death dead passed deceased killed executed",
        "found founded founder founding establish established establishment formed created set",
        "build built construct constructed construction completed erected",
        "publish published publication release released came come comes appeared _by",
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


@lru_cache(maxsize=65536)
def forms(word: str) -> frozenset[str]:
    """`word`'s stem, and its lemma's when that differs: an irregular verb's past is its
    verb ("sank" -> "sink", "fell" -> "fall", "began" -> "begin"; simplemma's English
    dictionary), so "Where did the Titanic sink?" is answered by "sank in the North
    Atlantic". Both forms are kept, so no match the stem made is lost."""
    lemma = simplemma.lemmatize(word.lower(), lang="en")
    return frozenset({stem(word), stem(lemma)})


def family(word: str) -> frozenset[str]:
    """The stems that state the same relation as `word` (itself, by its forms, if none)."""
    index = next((i for f in forms(word) if (i := _FAMILY_OF.get(f)) is not None), None)
    if index is None:
        return forms(word)
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


def _a_kind(word: str) -> bool:
    """A word naming the kind of answer, in any number ("country", "countries")."""
    return word in _KIND_WORDS or simplemma.lemmatize(word, lang="en") in _KIND_WORDS


def relation_words(question: str) -> list[str]:
    """The question's content words that say what it asks about the subject: not the
    subject's words, not words naming the kind of answer."""
    subject = {stem(w) for w in subject_words(question)}
    # A quoted passage is what the question shows, not what it asks about.
    unquoted = re.sub(r"[\"“][^\"“”]*[\"”]", " ", question)
    words = [
        w for w in terms(unquoted) if not w.isdigit() and stem(w) not in subject and not _a_kind(w)
    ]
    if not any(stem(w) in _FAMILY_OF for w in words) and re.search(r"\bby\b", unquoted):
        words.append("_by")  # "Is Thriller by Miles Davis?": a maker's "by" is the relation
    return words


# -- sources -------------------------------------------------------------------------

_LIFESPAN = re.compile(
    r"\((?:born\s+)?(c\.\s*)?(\d{2,4})\s*[–-]\s*(c\.\s*)?(\d{2,4})(\s*(?:BCE|BC))?\)"
)


def readable(text: str, *, description: bool = False) -> str:
    """`text` with Wikipedia's lifespan convention spelled out: "(1900–1945)" reads
    "(born 1900; died 1945)", "(c. 428–347 BC)" "(born 428 BC; died 347 BC)". In a
    text, only after a name ("Heinrich Himmler (1900–1945)"): "the Jin dynasty
    (266–420)" is no one's life. A `description` describes its subject whatever it
    ends with ("German Nazi leader (1900–1945)")."""

    def spelled(m: re.Match[str]) -> str:
        before = re.search(r"([\w'’.-]+)\s*$", text[: m.start()])
        if not description and not (before and before.group(1)[0].isupper()):
            return m.group(0)
        era = f" {m.group(5).strip()}" if m.group(5) else ""
        return f"(born {m.group(2)}{era}; died {m.group(4)}{era})"

    return _LIFESPAN.sub(spelled, text)


def source_says(source: str | Source) -> str:
    """All a source says, readable: its title with its description as one statement
    ("Swan Lake (1877 ballet by Pyotr Ilyich Tchaikovsky)": the description says what
    the titled subject is), then its text."""
    if isinstance(source, str):
        return readable(source)
    title = source.title.strip().rstrip(".")
    description = readable(source.description.strip().rstrip("."), description=True)
    head = f"{title} ({description})" if title and description else title or description
    return readable(f"{head}. {source.text}" if head else source.text)


def named_stopwords(text: str, sources: Mapping[str, str | Source]) -> set[str]:
    """The capitalised words of `text` that `terms` drops as stop words but a source
    writes as part of a name, after another capitalised word ("More" in "by Thomas
    More"): lower-cased. A name is content, whatever the word means elsewhere."""
    found: set[str] = set()
    # Four letters at least: "The" after a title run on ("Quillon Atlas The Quillon") is
    # no name.
    for word in set(re.findall(r"\b[A-Z][a-z'’]{3,}\b", text)):
        if word.lower() not in STOPWORDS:
            continue
        name = re.compile(rf"\b[A-Z][\w'’.-]*\s+{re.escape(word)}\b")
        if any(name.search(source_says(source)) for source in sources.values()):
            found.add(word.lower())
    return found


def full_names(text: str, source: str | Source) -> str:
    """`text` with each stop word `source` writes as a name's last word replaced by that
    name ("More" -> "Thomas More", from "satire by Thomas More"), so the name is judged
    as the content it is."""
    for word in named_stopwords(text, {"": source}):
        proper = word.capitalize()
        found = re.search(rf"\b((?:[A-Z][\w'’.-]*\s+)+){re.escape(proper)}\b", source_says(source))
        if found and found.group(0) not in text:
            text = re.sub(rf"\b{re.escape(proper)}\b", found.group(0), text, count=1)
    return text


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
    out = {f for w in terms(text) for f in forms(w)}
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
        # When the first hop states them all, one of them in this clause is enough.
        known = [f for f in known if not satisfied & f]
    related = not every or any(clause_stems & f for f in every)
    complete = all(clause_stems & f for f in known)
    return related, complete


_SPAN = re.compile(
    r"\b(\d{3,4})\s*(?:–|—|-|\bto\b|\buntil\b)\s*(\d{3,4})\b"
    r"|\bfrom\s+(?:[^\d.;]{0,30}?)(\d{3,4})\b[^.;]{0,40}?\b(?:to|until|till)\b[^.;\d]{0,30}(\d{3,4})\b"
)
_START_Q = re.compile(r"\b(?:begin|began|begun|start|started|become|became|first|since)\b"
                      r"|^\W*from\b", re.I)  # fmt: skip
_END_Q = re.compile(r"\b(?:end|ended|until|last|stop|stopped|finish|finished)\b", re.I)


def _spans(clause: str) -> Iterator[tuple[str, str]]:
    """Every (first, last) year span of `clause`, overlapping ones too: "from 1866 to 1889
    and Emperor of Ethiopia from 1889 to his death in 1913" has two."""
    at = 0
    while (span := _SPAN.search(clause, at)) is not None:
        yield span.group(1) or span.group(3), span.group(2) or span.group(4)
        at = span.start() + 1


def _right_end(numbers: set[str], question: str, clause: str) -> bool:
    """A span ("King of England from 1199 to 1216") answers a question of its start
    ("When did his reign begin?") by its first year and of its end by its last."""
    start, end = _START_Q.search(question), _END_Q.search(question)
    if (start is None) == (end is None):
        return True
    wrong: set[str] = set()
    right: set[str] = set()
    for first, last in _spans(clause):
        if first != last:
            wrong.add(last if start else first)
            right.add(first if start else last)
    # "king of Shewa from 1866 to 1889 and Emperor of Ethiopia from 1889 to ... 1913":
    # a year that ends one span and starts the next starts a reign.
    return not (numbers & wrong) - right


def other_end(
    answer: str, question: str, sources: Mapping[str, Source] | Mapping[str, str | Source]
) -> tuple[str, str, str] | None:
    """(source id, year, clause) when a year `answer` is the wrong end of a span a source
    about the subject gives ("Empress of China from 690 to 705" drafted "705" for "When
    did Wu Zetian become Empress?"): the span's other end, if that end is stated as the
    answer to this question. None when the question asks neither a start nor an end,
    the answer is not one year, or the sources give more than one other end."""
    if answer_kind(question) != "year":
        return None
    start, end = _START_Q.search(question), _END_Q.search(question)
    if (start is None) == (end is None):
        return None
    drafted = numbers_in(_without_markers(answer))
    if len(drafted) != 1:
        return None
    (year,) = drafted
    linked = bridges(question, sources)
    found: dict[str, tuple[str, str]] = {}
    for source_id, source in sources.items():
        if source_id in linked or not about(question, source):
            continue
        if not _named_by(question, source):
            continue  # the article of what the question names, not "Western Front (World War II)"
        for clause in clauses(source_says(source)):
            if not _right_end({year}, question, clause):
                for first, last in _spans(clause):
                    if year == (last if start else first) and first != last:
                        other = first if start else last
                        held = find_answer(other, question, source)
                        if held is not None and held.related and held.complete:
                            found.setdefault(other, (source_id, clause))
    if len(found) != 1:
        return None
    ((other, (source_id, clause)),) = found.items()
    return source_id, other, clause


def link_text(holder: str | Source, title: str) -> str:
    """What the first hop states of the second: the clauses of `holder` that name the
    title `title` ("Leviathan (1651 book by Thomas Hobbes)" says who wrote it, not when
    he was born); all it says when none does."""
    said = source_says(holder)
    name = bare_title(title)
    if len(name) > 2:
        naming = [c for c in clauses(said) if re.search(rf"\b{re.escape(name)}\b", c)]
        if naming:
            return " ".join(naming)
    return said


def _link(holder: str | Source, bridge: str | Source) -> set[str]:
    return _stems(link_text(holder, bridge.title if isinstance(bridge, Source) else ""))


# Kinds of thing a second hop is ("the capital of the country where ... is").
_HOP_KINDS = frozenset(
    ["country", "city", "town", "place", "state", "region", "river", "lake", "mountain"]
)


def _a_hop(question: str, done: set[str], said: str) -> bool:
    """Is a source a subject's source names (a bridge) a step the question asks for? Its
    naming states one of the question's relations ("painting by Pablo Picasso" for the
    painter of Guernica), or it is a kind of thing the question asks through ("Country
    in Southeast Asia" for the country where Ho Chi Minh City is). "The largest city in
    Vietnam" is no step to Vietnam's area for Ho Chi Minh City's own."""
    every, _ = _relations(question)
    if not every or any(done & f for f in every):
        return True  # a question of no relation ("Which subject is described as: ...")
    # A maker's noun the lexicon lacks, by its root: "sculpture by" for "the sculptor of".
    roots = {w[:5] for w in relation_words(question) if len(w) >= 6}
    if roots & {w[:5] for w in done if len(w) >= 6}:
        return True
    kinds = {w for w in re.findall(r"\b[a-z]+\b", question) if w in _HOP_KINDS}
    return bool(kinds & set(terms(said[:200])))


def find_answer(
    answer: str, question: str, source: str | Source, *, satisfied: str | Source = ""
) -> AnswerClause | None:
    """The clause of `source` stating `answer` (its numbers all, and most of its added
    words), preferring one that carries the question's relation; None if none states it."""
    numbers, words = _content(answer, question)
    asked = _stems(question)
    # A stop word the source writes as a name is the answer's content ("More").
    words += [stem(w) for w in named_stopwords(answer, {"": source}) if stem(w) not in asked]
    if not numbers and not words:
        return None
    said = source_says(source)
    vocabulary = _stems(said)
    done = _link(satisfied, source) if satisfied else set()
    if satisfied and answer_kind(question) in _TYPED and not _a_hop(question, done, said):
        return None  # a bridge's year or number is not the subject's
    if words and sum(1 for w in words if w in vocabulary) / len(words) < 0.5:
        return None
    best: AnswerClause | None = None
    pieces = clauses(said)
    for clause in pieces:
        here = numbers_in(clause)
        if numbers and not numbers <= here:
            continue
        if numbers and not _right_end(numbers, question, clause):
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
    if best is not None and not best.related and not numbers and not done:
        return _of_the_answer(words, question, pieces) or best
    return best


def in_own_article(answer: str, question: str, source: str | Source) -> bool:
    """Does the source about the answer itself state the question's relation to its
    subject ("Bill Gates ... co-founded Microsoft" for "Who founded Microsoft?")?"""
    _, words = _content(answer, question)
    return bool(words) and _of_the_answer(words, question, clauses(source_says(source))) is not None


def _of_the_answer(
    words: Sequence[str], question: str, pieces: Sequence[str]
) -> AnswerClause | None:
    """In the source about the answer itself (its first clause, the title, holds the
    answer's words), the clause that states the question's relation to the question's
    other words: "Who discovered penicillin?" is answered by Alexander Fleming's article,
    "He shared the 1945 Nobel Prize ... for the discovery of penicillin"."""
    if not pieces or not set(words) <= _stems(pieces[0]):
        return None
    every, _ = _relations(question)
    if not every:
        return None
    # Every word the question says of its subject, by its family: "discovery" and
    # "penicillin"; the subject's name too ("the theory of relativity").
    rest = _stems(question) - set().union(*every) - _stems(" ".join(_KIND_WORDS))
    for clause in pieces[1:]:
        stems = _stems(clause)
        if all(stems & f for f in every) and rest <= stems:
            return AnswerClause(clause, True, True)
    return None


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
    if comparison_sides(question) is not None:
        # A comparison ("Was A born before B?", "Who was born first, A or B?") is
        # answered by two facts, one per side: both, or nothing yet.
        facts = comparison_facts(question, sources)
        return [(f.source_id, f.clause) for f in facts] if facts else []
    if kind == "list":
        # As many items as asked, named by the sources in the relation; else search on.
        items = list_candidates(question, sources)
        return items if len(items) >= list_size(question) else []
    typed = _TYPED.get(kind)
    asked = _stems(question)
    linked = bridges(question, sources)
    out: list[tuple[str, str]] = []
    for source_id, source in sources.items():
        subject = about(question, source)
        if not subject and source_id not in linked:
            continue
        if kind in ("definition", "yesno"):
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
            done = _link(sources[hop], source) if hop is not None else set()
            related, complete = _judge(_stems(clause), question, done)
            if related and complete:
                out.append((source_id, clause))
    return out


_AGE_WORDS = frozenset(stem(w) for w in ("young", "younger", "old", "older", "age"))


def hop_value(
    question: str, sources: Mapping[str, Source] | Mapping[str, str | Source]
) -> tuple[str, str, str] | None:
    """(source id, value, clause): the one year or number the second hop's sources give
    for what a two-hop question asks ("When was the painter of Guernica born?": "born
    1881" in the article Guernica's names, "painting by ... Pablo Picasso"), read after
    the asked relation's word, the relation the first hop states aside ("painter").
    None when the question asks no year or number, when a source about the subject
    itself has a clause that answers (one hop), or when the hops give no value or more
    than one."""
    kind = answer_kind(question)
    if kind not in _TYPED:
        return None
    linked = bridges(question, sources)
    every = relation_words(question)
    bearing = answer_clauses(question, sources)
    found: dict[str, tuple[str, str]] = {}
    asked_words: set[str] = set()
    for source_id, clause in bearing:
        hop = linked.get(source_id)
        if hop is None:
            continue
        done = _link(sources[hop], sources[source_id]) - _AGE_WORDS
        asked = [w for w in every if not done & family(w)] or every
        # A relation's family without the words that compare ages: "a young boy" in a
        # painting's text says nothing of when anyone was born.
        asked_words |= set().union(*(family(w) for w in asked)) - _AGE_WORDS
        given = _value_in(clause, asked)
        if given is not None and (kind != "year" or _YEAR.fullmatch(given[1])):
            found.setdefault(given[1], (source_id, clause))
    # A clause of a source about the subject itself with the asked relation answers in
    # one hop; one with only the first hop's relation ("a painting ... of 1830") not.
    if any(
        source_id not in linked and _first_word(clause, asked_words) is not None
        for source_id, clause in bearing
    ):
        return None
    if len(found) != 1:
        return None
    ((number, (source_id, clause)),) = found.items()
    return source_id, number, clause


_LESS = re.compile(r"\b(?:before|earlier|older|sooner|shorter|smaller|fewer|less|lower)\b", re.I)
_MORE = re.compile(
    r"\b(?:after|later|younger|longer|taller|larger|bigger|more|higher|deeper|greater)\b", re.I
)
_NAME_GROUP = re.compile(
    r"\b[A-Z][\w'’.-]*(?:\s+(?:(?:of|de|da|von|van|der|the|la|le|del|di|du)\s+)*[A-Z][\w'’.-]*)*"
)


def _comparative_word(question: str) -> re.Match[str] | None:
    """The word by which `question` compares two things one way ("before", "older",
    "taller"); None when it has none, or words of both ways."""
    less, more = _LESS.search(question), _MORE.search(question)
    return None if (less is None) == (more is None) else less or more


_CHOICE = re.compile(
    r"^\W*(?P<head>(?:which|who|what)\b[^,:]*?)\s*[,:]\s*(?:the\s+)?(?P<a>[^:?]+?),?\s+or\s+"
    r"(?:the\s+)?(?P<b>[^:?]+?)\s*\?\s*$",
    re.I,
)


@dataclass(frozen=True)
class Choice:
    """A question that asks which of two comes first one way ("Which is older, Plato
    or Kant?", "Who was born first: A or B?"): its two names, relation and direction."""

    first: str
    second: str
    relations: list[str]
    less: bool  # the smaller value wins ("older", "earlier", "first")


def choice_sides(question: str) -> tuple[str, str] | None:
    """The two names a question offers to choose between ("Which is larger, Russia or
    Canada?"), whatever its relation; None when it offers none."""
    found = _CHOICE.match(question.strip())
    return (found.group("a").strip(), found.group("b").strip()) if found else None


def choice(question: str) -> Choice | None:
    found = _CHOICE.match(question.strip())
    if found is None:
        return None
    head = found.group("head")
    word = _comparative_word(head)
    if word is not None:
        less = _LESS.search(head) is not None
    elif re.search(r"\bfirst\b", head, re.I):
        less = True
    elif re.search(r"\blast\b", head, re.I):
        less = False
    else:
        return None
    words = [w for w in terms(head) if stem(w) in _FAMILY_OF]
    if not words:
        return None
    return Choice(found.group("a").strip(), found.group("b").strip(), words, less)


def _smaller_wins(question: str) -> bool:
    picked = choice(question)
    return picked.less if picked is not None else _LESS.search(question) is not None


def comparative(question: str) -> bool:
    """Does `question` compare two things one way ("before", "older", "taller")?"""
    return _comparative_word(question) is not None


def compared(question: str, answer: str) -> bool | None:
    """The yes/no a comparison question ("Was A born before B?") gets from the two
    numbers the answer states for A and for B, in the direction its comparative word
    gives; None when the question compares nothing or the answer does not give one
    number for each."""
    if _comparative_word(question) is None or choice(question) is not None:
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
    less = _LESS.search(question) is not None
    return values[0] < values[1] if less else values[0] > values[1]


# -- the two facts that decide a comparison ------------------------------------------

# Relations whose value is a year (a 3-4 digit number), and how an answer states each.
_YEAR_RELATIONS = {"born": "was born in", "die": "died in", "found": "was founded in",
                   "build": "was built in", "publish": "was published in",
                   "premiere": "premiered in", "reign": "began to reign in"}  # fmt: skip
_YEAR = re.compile(r"\b(\d{3,4})\b(?!\s*[\d,.]\d)(\s*(?:BCE|BC|B\.C\.))?")
_AMOUNT = re.compile(r"\d[\d,]*(?:\.\d+)?")


@dataclass(frozen=True)
class Fact:
    """One side of a comparison as a source states it: "Adam Mickiewicz", born, 1798,
    in source [1]'s clause "(born 1798"."""

    name: str
    relation: str  # the question's relation word ("born", "die", "older")
    value: float
    number: str  # as the source writes it
    source_id: str
    clause: str

    def sentence(self) -> str:
        key = next((k for k in _YEAR_RELATIONS if stem(k) in family(self.relation)), None)
        said = _YEAR_RELATIONS[key] if key else f"{self.relation}:"
        return f"{self.name} {said} {self.number} {self.source_id}"


def _side(part: str, *, first: bool) -> tuple[str, list[str]]:
    """The name one side of a comparison names and its relation words the lexicon knows
    ("Did Al-Ghazali die" -> ("Al-Ghazali", ["die"]))."""
    groups = [g.strip() for g in _NAME_GROUP.findall(part[1:] if first else part) if terms(g)]
    name = " ".join(groups)
    named = {stem(w) for w in terms(name)}
    words = [w for w in terms(part) if stem(w) not in named and stem(w) in _FAMILY_OF]
    return name, words


def comparison_sides(question: str) -> list[tuple[str, list[str]]] | None:
    """The two (name, relations) a comparison question sets side by side: "Did A die
    before B was born?" -> [(A, [die]), (B, [born])]; a side without its own relation
    takes the other's ("Was A born earlier than B?"), and a comparative word of a
    relation ("older") is one for both. None when the question compares nothing."""
    picked = choice(question)
    if picked is not None:
        return [(picked.first, picked.relations), (picked.second, picked.relations)]
    found = _comparative_word(question)
    if found is None:
        return None
    word, at = found.group(0), found.start()
    left = _side(question[:at], first=True)
    right = _side(question[at + len(word) :], first=False)
    shared = [word] if stem(word) in _FAMILY_OF else []
    sides = [(left[0], left[1] or right[1] or shared), (right[0], right[1] or left[1] or shared)]
    if any(not name or not words for name, words in sides):
        return None
    return sides


def _names(name: str, source: str | Source) -> float:
    """How much of `name` the source's title (else its first clause) holds. A name only
    in the title's disambiguation counts for less: "Beethoven" is the subject of "Ludwig
    van Beethoven" before "Symphony No. 3 (Beethoven)"."""
    if not isinstance(source, Source):
        return _share(name, clauses(source)[0] if source else "")
    bare = _share(name, bare_title(source.title))
    return bare if bare > 0.5 else max(bare, 0.6 * _share(name, source.title))


def _head(source: str | Source) -> str:
    return bare_title(source.title) if isinstance(source, Source) else ""


def _share(name: str, head: str) -> float:
    words = terms(name)
    held = {stem(w) for w in terms(head)}
    return sum(1 for w in words if stem(w) in held) / len(words) if words else 0.0


def _first_word(text: str, stems: set[str] | frozenset[str]) -> int | None:
    """Where the first word of `text` whose stem is in `stems` starts (None if none)."""
    words = re.finditer(r"[\w'’-]+", text)
    return next((m.start() for m in words if stem(m.group(0)) in stems), None)


def bare_title(title: str) -> str:
    """A title without its disambiguation: "Leviathan (Hobbes book)" -> "Leviathan"."""
    return re.sub(r"\s*\([^)]*\)$", "", title).strip()


def _value_in(clause: str, relations: Sequence[str]) -> tuple[float, str] | None:
    """The number `clause` gives for one of `relations`: the first after the relation's
    word, else the last before it; a year for a year's relation (BC counts below 0)."""
    wanted = set().union(*(family(w) for w in relations))
    at = _first_word(clause, wanted)
    if at is None:
        return None
    yearly = any(stem(k) in wanted for k in _YEAR_RELATIONS)
    found: list[tuple[int, float, str]] = []
    for m in (_YEAR if yearly else _AMOUNT).finditer(clause):
        text = m.group(0).strip()
        value = float(m.group(1) if yearly else text.replace(",", ""))
        found.append((m.start(), -value if yearly and m.group(2) else value, text))
    after = [f for f in found if f[0] > at]
    pick = after[0] if after else (found[-1] if found else None)
    return None if pick is None else (pick[1], pick[2])


def _fact(
    name: str, relations: Sequence[str], sources: Mapping[str, Source] | Mapping[str, str | Source]
) -> Fact | None:
    """The fact a source about `name` states for `relations`, from the source whose title
    names it best."""
    # Ties go to the title with fewer other words: "A. J. P. Taylor" before "Taylor Swift".
    scored = sorted(
        ((_names(name, s), _share(_head(s), name), i) for i, s in sources.items()),
        key=lambda p: (-p[0], -p[1]),
    )
    for score, _, source_id in scored:
        source = sources[source_id]
        if score <= 0.5:
            break
        for clause in clauses(source_says(source)):
            value = _value_in(clause, relations)
            if value is not None:
                return Fact(name, relations[0], value[0], value[1], source_id, clause)
    return None


def comparison_facts(
    question: str, sources: Mapping[str, Source] | Mapping[str, str | Source]
) -> tuple[Fact, Fact] | None:
    """The two facts that decide a comparison question, each from a source about its
    side; None when the question compares nothing or a side's fact is not retrieved."""
    sides = comparison_sides(question)
    if sides is None:
        return None
    found = [_fact(name, words, sources) for name, words in sides]
    if found[0] is None or found[1] is None:
        return None
    return found[0], found[1]


def missing_sides(
    question: str, sources: Mapping[str, Source] | Mapping[str, str | Source]
) -> list[str]:
    """The names of a comparison whose fact no retrieved source states yet: what to
    search next."""
    sides = comparison_sides(question) or []
    return [name for name, words in sides if _fact(name, words, sources) is None]


def decided(question: str, facts: tuple[Fact, Fact]) -> str:
    """The answer the two facts give, with both facts and their sources: "No: A was born
    in 1895 [1]; B was born in 1762 [2]." (Equal values answer No: neither is before.)"""
    less = _smaller_wins(question)
    first, second = facts
    truth = first.value < second.value if less else first.value > second.value
    if choice(question) is not None:
        # "Which is older, A or B?": the side the facts pick, named first.
        return f"{chosen_name(question, facts)}: {first.sentence()}; {second.sentence()}."
    return f"{'Yes' if truth else 'No'}: {first.sentence()}; {second.sentence()}."


def chosen_name(question: str, facts: tuple[Fact, Fact]) -> str:
    """The name of the side a choice's two facts pick ("Which is older, A or B?"),
    "Neither" when they are equal."""
    first, second = facts
    if first.value == second.value:
        return "Neither"
    less = _smaller_wins(question)
    return (first if (first.value < second.value) == less else second).name


# -- a yes/no question that states one claim ------------------------------------------

_NEGATED = re.compile(r"\b(?:not|never|no)\b|n't\b", re.I)


@dataclass(frozen=True)
class Claim:
    """What the sources say of a yes/no question's one claim: its truth, and the clause
    of source `source_id` that decides it."""

    truth: bool
    source_id: str
    clause: str


def claim_verdict(
    question: str, sources: Mapping[str, Source] | Mapping[str, str | Source]
) -> Claim | None:
    """A yes/no question that states one claim about its subject ("Is Paris the capital
    of France?", "Was Chopin born in 1812?"), decided by a clause of a source about the
    subject: true when the clause holds all the claim's names, numbers and relation;
    false when it holds its names and relation with another year than the claim's one
    (born in 1810, not 1812). None when no clause decides it, or the question compares
    two things or is negated (those are decided elsewhere, or not at all)."""
    if answer_kind(question) != "yesno" or comparative(question) or _NEGATED.search(question):
        return None
    names = {stem(w) for w in subject_words(question)}
    years = set(_YEAR.findall(question))
    asked = {y for y, _ in years}
    if not names or len(asked) > 1:
        return None
    against: Claim | None = None
    for source_id, source in sources.items():
        if not about(question, source):
            # A false claim's other name is not in its subject's source ("Is the capital
            # of Algeria Hanoi?"): the source the question names may still refute it.
            if against is None and not asked and _named_by(question, source):
                against = _other_name(question, source_id, source, names - _title(source))
            continue
        # The source's own title names its subject in every clause ("died 1849" in
        # Chopin's article); the claim's other names must be in the clause itself.
        others = names - _title(source)
        for clause in clauses(source_says(source)):
            held = _stems(clause)
            related, complete = _judge(held, question)
            if not (others <= held and related and complete and relation_words(question)):
                continue
            if not _objects_follow(question, clause, others):
                continue
            stated = {y for y, _ in _YEAR.findall(clause)}
            if asked <= stated:
                return Claim(True, source_id, _tidy(clause))
            if asked and len(stated) == 1 and against is None:
                against = Claim(False, source_id, _tidy(clause))
        if against is None and not asked:
            against = _other_name(question, source_id, source, others)
    return against


def maker(
    question: str, sources: Mapping[str, Source] | Mapping[str, str | Source]
) -> tuple[str, str, str] | None:
    """(source id, name, clause): who a "who made it" question's subject's own source
    says made it ("Who founded Toyota?": "It was founded by Kiichiro Toyoda"), the first
    name after the relation's word in the first clause of the source the question names
    by its title that words the relation. None for another kind of question, when no
    such source or clause is retrieved, or when the name is the question's own."""
    if answer_kind(question) != "person" or comparison_sides(question) is not None:
        return None
    wanted = set().union(*_relations(question)[1])
    if not wanted:
        return None
    asked = _stems(question)
    named = [(i, s) for i, s in sources.items() if _named_by(question, s)]
    for source_id, source in named:
        for clause in clauses(source_says(source)):
            if _first_word(clause, wanted - {"_by"}) is None:
                continue
            name = _maker_after(clause, wanted)
            if name and not _stems(name) <= asked:
                return source_id, name, _tidy(clause)
    if "_by" not in wanted:
        return None
    # No clause words the relation: a work "by" someone in its title's description
    # ("Divine Comedy (Italian narrative poem by Dante Alighieri)") for a relation a
    # "by" words (writing, painting, directing, making).
    for source_id, source in named:
        if isinstance(source, Source) and source.description.strip():
            clause = clauses(source_says(source))[0]
            name = _maker_after(clause, wanted)
            if name and not _stems(name) <= asked:
                return source_id, name, _tidy(clause)
    return None


_BY_WORD = re.compile(r"\bby\b")


def _maker_after(clause: str, wanted: set[str]) -> str | None:
    """The maker's name in the words after the relation's: a name of two words or more
    before a one-word name, which is most often a nationality ("by English writer
    George Orwell", "by the Russian and American novelist Vladimir Nabokov")."""
    at = _first_word(clause, wanted | ({"by"} if "_by" in wanted else set()))
    # The maker follows the relation's "by" ("written by", "a 1642 painting by"), not
    # any name after the relation ("written in Latin", "released through Epic Records").
    by = _BY_WORD.search(clause, at, at + 40) if at is not None else None
    if by is None:
        return None
    near = clause[by.end() : by.end() + 90]
    groups: list[str] = []
    for found in _NAME_GROUP.finditer(near):
        name = found.group(0).strip(" .,;:")
        if not 0 < len(terms(name)) <= 4:
            continue
        # One capitalised word before a lower-case one qualifies a noun ("the Persian
        # poet and Sufi mystic Rumi"): not a name.
        if len(name.split()) == 1 and re.match(r"\s+[a-z]", near[found.end() :]):
            continue  # ("Anglo-Irish writer" too)
        groups.append(name)
    whole = [g for g in groups if len(g.split()) >= 2]
    return next(iter(whole or groups), None)


def _title(source: str | Source) -> set[str]:
    return _stems(bare_title(source.title)) if isinstance(source, Source) else set()


def _named_by(question: str, source: str | Source) -> bool:
    """Does the question name `source` by its whole title?"""
    title = _title(source)
    return bool(title) and title <= _stems(question)


def _other_name(
    question: str, source_id: str, source: str | Source, others: set[str]
) -> Claim | None:
    """False, when a clause of the subject's own source gives the claim's relation to
    another name than the claim's ("Its capital is Algiers" for "Is the capital of
    Algeria Hanoi?"): the first name after the relation word, none of the question's."""
    if not isinstance(source, Source) or not others:
        return None
    wanted = set().union(*_relations(question)[0])
    asked = _stems(question)
    for clause in clauses(source_says(source)):
        held = _stems(clause)
        related, complete = _judge(held, question)
        if not (related and complete) or others & held:
            continue
        given = _after_relation(clause, wanted)
        if given is not None and not (_stems(given) & asked):
            return Claim(False, source_id, _tidy(clause))
    return None


def _after_relation(text: str, wanted: set[str]) -> str | None:
    """The first name `text` gives after its first word of the `wanted` relation stems."""
    # A maker's "by" ("1982 novel by Alice Walker") words the making relations.
    at = _first_word(text, wanted | ({"by"} if "_by" in wanted else set()))
    found = _NAME_GROUP.search(text, at) if at is not None else None
    return found.group(0) if found else None


def _objects_follow(question: str, clause: str, others: set[str]) -> bool:
    """A name the question gives after its relation ("capital of *France*") must be the
    first name the clause gives after the relation: "capital city of New South Wales,
    Australia" does not make Sydney the capital of Australia."""
    wanted = set().union(*_relations(question)[0])
    asked = _after_relation(question, wanted)
    if asked is None or not (_stems(asked) & others):
        return True
    given = _after_relation(clause, wanted)
    return given is not None and _stems(asked) & others <= _stems(given)


def _tidy(clause: str) -> str:
    """A clause read from a description as a sentence piece: "Chopin (Polish composer
    (born 1810" -> "Chopin, Polish composer, born 1810"."""
    flat = re.sub(r"\s*\(", ", ", clause).replace(")", "")
    return " ".join(flat.split()).strip(" ,.;")


# -- the items a list question asks for ----------------------------------------------

_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)


def _item_key(name: str) -> frozenset[str]:
    return frozenset(stem(w) for w in terms(_ARTICLE.sub("", name)))


def _relation_sources(
    question: str, sources: Mapping[str, Source] | Mapping[str, str | Source]
) -> dict[str, str]:
    """id -> the lead clause of each source that says it stands in the question's
    relation to the subject, not being the subject ("Swan Lake (1877 ballet by Pyotr
    Ilyich Tchaikovsky)" for ballets Tchaikovsky made): its title is an item."""
    subject = {stem(w) for w in subject_words(question)}
    every, _ = _relations(question)
    out: dict[str, str] = {}
    if not subject:
        return out
    for source_id, source in sources.items():
        if not isinstance(source, Source) or _item_key(source.title) <= subject:
            continue
        said = clauses(source_says(source))
        held = _stems(said[0]) if said else set()
        if sum(1 for w in subject if w in held) / len(subject) > 0.5 and any(
            held & f for f in every
        ):
            out[source_id] = said[0]
    return out


def list_evidence(
    question: str, sources: Mapping[str, Source] | Mapping[str, str | Source]
) -> list[tuple[str, str]]:
    """(source id, clause) of what can answer a list question: each clause of a source
    about the subject that carries the question's relation ("Moldova is bordered by
    Romania to the west and Ukraine ..."), and the lead of each source that says it
    stands in that relation to the subject."""
    every, _ = _relations(question)
    wanted = set().union(*every) if every else set()
    items = _relation_sources(question, sources)
    out = list(items.items())
    for source_id, source in sources.items():
        if source_id in items or not about(question, source):
            continue
        for sentence in _SENTENCE_END.split(source_says(source)):
            # From the relation's word to the sentence's end: "... is bordered by China
            # to the north, and Laos and Cambodia to the west; ..." names every item.
            at = _first_word(sentence, wanted)
            if not wanted:
                out.append((source_id, sentence.strip()))
            elif at is not None:
                out.append((source_id, sentence[at:].strip()))
    return out


_SENTENCE_END = re.compile(r"(?<!\b[A-Z]\.)(?<=[.!?])\s+")


# Nouns that name a kind of thing at the end of its name ("the Red *Sea*", "Indian
# *Ocean*"): an item so named is of that kind, not of the one a list asks for.
_KIND_HEADS = frozenset(
    [
        "ocean",
        "sea",
        "gulf",
        "bay",
        "channel",
        "strait",
        "river",
        "lake",
        "mountain",
        "mountains",
        "range",
        "desert",
        "peninsula",
        "island",
        "islands",
        "canal",
        "sound",
        "lagoon",
        "basin",
        "plateau",
        "valley",
        "passage",
    ]
)
_LIST_CLASS = re.compile(
    r"\b(?:which|what)\s+([a-z]+s)\b"
    r"|\b(?:name|list)\s+(?:two|three|four|five|some|several|\d)\s+(?:of\s+the\s+)?([a-z]+s)\b",
    re.I,
)


def list_class(question: str) -> str | None:
    """The plural noun a list question asks for ("countries" in "Which countries
    border Chad? Name two."), or None."""
    found = _LIST_CLASS.search(question)
    return (found.group(1) or found.group(2)).lower() if found else None


def _singular(word: str) -> str:
    for plural, single in (("ies", "y"), ("ses", "s"), ("oes", "o"), ("s", "")):
        if word.endswith(plural):
            return word[: -len(plural)] + single
    return word


# The nouns that name a kind of place before its name ("Lake Titicaca", "Mount Fuji",
# "Gulf of Mexico"), with the kind they name.
_KIND_FIRST = {w: w for w in _KIND_HEADS} | {"mount": "mountain", "isle": "island"}


def other_kind(name: str, asked: str | None) -> bool:
    """Does `name` begin or end with a noun naming another kind of thing than `asked`
    ("Indian Ocean", "Lake Titicaca" when countries are asked)?"""
    words = _ARTICLE.sub("", name.lower()).split()
    if not words or asked is None:
        return False
    kinds = [words[-1] if words[-1] in _KIND_HEADS else ""]
    if len(words) > 1:
        kinds.append(_KIND_FIRST.get(words[0], ""))
    return any(k and _singular(k) != _singular(asked) for k in kinds)


# Kinds of place a description names ("Country in South America", "Mountain range near
# the border of ...", "Overseas department of France"); a country by any of its names.
_PLACE_KINDS = _KIND_HEADS | {
    "country", "department", "territory", "region", "province", "state", "city", "town",
    "county", "dependency", "district", "capital", "municipality", "village",
}  # fmt: skip
_COUNTRY = frozenset({"country", "nation", "state"})


def _described_kind(description: str) -> str | None:
    """The head noun of a description's first phrase, if it names a kind of place:
    "range" for "Mountain range near the border of Afghanistan and Pakistan"."""
    head = re.split(r"\s+(?:in|of|near|on|at|by|from|with|and|located|between)\s+|,", description)
    words = head[0].lower().split() if head else []
    return words[-1] if words and words[-1] in _PLACE_KINDS else None


def described_other_kind(
    name: str, asked: str | None, sources: Mapping[str, Source] | Mapping[str, str | Source]
) -> bool:
    """Does a retrieved article titled `name` describe another kind of place than asked
    ("Hindu Kush": "Mountain range near the border of Afghanistan ..." when countries
    are asked)? Only between kinds of place: "Painting by Pablo Picasso" is a work."""
    want = _singular(asked) if asked else None
    if want not in _PLACE_KINDS and want != "nation":
        return False
    for source in sources.values():
        if isinstance(source, Source) and bare_title(source.title).lower() == name.lower():
            kind = _described_kind(source.description)
            if kind is None:
                return False
            same = kind == want or {kind, want} <= _COUNTRY
            return not same
    return False


def _initials(name: str, subject: Sequence[str]) -> bool:
    """ "DRC" for the Democratic Republic of the Congo: the subject's own abbreviation."""
    return name.isupper() and set(name.lower()) <= {w[0].lower() for w in subject}


def list_candidates(
    question: str, sources: Mapping[str, Source] | Mapping[str, str | Source]
) -> list[tuple[str, str]]:
    """(source id, item) of what the retrieved sources name as answers to a list
    question, in the order they name them: the titles of sources in the question's
    relation to the subject, and the names in the relation clauses of sources about it
    (`list_evidence`), the subject's own names aside."""
    named = subject_words(question)
    subject = frozenset(stem(w) for w in named)
    asked = _stems(question) - subject  # the question's other words ("Name", "List")
    items = _relation_sources(question, sources)
    # Names in a sentence are items only after a relation the lexicon knows ("bordered
    # by", "composed"): after a bare class word ("planets") a sentence names anything.
    known = bool(_relations(question)[1])
    asked_class = list_class(question)
    out: list[tuple[str, str]] = []
    seen: set[frozenset[str]] = set()
    for source_id, clause in list_evidence(question, sources):
        if source_id not in items and not known:
            continue
        if source_id in items:
            source = sources[source_id]
            found = [bare_title(getattr(source, "title", ""))]
        else:
            found = _NAME_GROUP.findall(clause)
        for raw in found:
            name = (raw if source_id in items else _ARTICLE.sub("", raw)).strip(" .,;:")
            key = _item_key(name)
            if (
                not key
                or key == subject
                or key in seen
                or _initials(name, named)
                or other_kind(name, asked_class)
                or described_other_kind(name, asked_class, sources)
                or (source_id not in items and key <= asked)
            ):
                continue
            seen.add(key)
            out.append((source_id, name))
    return _whole_names(out)


def _whole_names(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The items that are not part of another item: "Crime" and "Punishment", read
    apart from "... Crime and Punishment, The Idiot ...", are one title."""
    keys = [_item_key(name) for _, name in items]
    return [item for item, key in zip(items, keys, strict=True) if not any(key < k for k in keys)]


def items_named(answer: str, candidates: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The candidates (source id, item) that `answer` names, its citation markers aside."""
    flat = " ".join(terms(_without_markers(answer)))
    return _whole_names(
        [
            (source_id, name)
            for source_id, name in candidates
            if re.search(rf"(?<!\w){re.escape(' '.join(terms(name)))}(?!\w)", flat)
        ]
    )


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
    if covered(subject) or (len(groups) > 1 and any(covered(g) for g in groups)):
        return True
    # "Is the capital of Cuba Bangui?": two names side by side read as one group; a
    # yes/no question is about each source it names by its whole title.
    return answer_kind(question) == "yesno" and _named_by(question, source)


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
        name = bare_title(s.title)
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


def holds_answer(
    answer: str, question: str, sources: Mapping[str, Source] | Mapping[str, str | Source]
) -> bool:
    """Does a retrieved source state `answer` for this question, verified or not? Any
    clause holding it, for a name; for a year or a number, a clause with the asked
    relation and every number the question gives itself ("in 1500": a population "as
    of 2025" is another fact), in a source about the subject or a second hop the
    question asks through (Vietnam's area is not Ho Chi Minh City's)."""
    if answer_kind(question) not in _TYPED:
        return any(find_answer(answer, question, source) for source in sources.values())
    own = numbers_in(question)
    linked = bridges(question, sources)
    for source_id, source in sources.items():
        hop = linked.get(source_id)
        if hop is None and not about(question, source):
            continue
        satisfied = link_text(sources[hop], _title_of(source)) if hop else ""
        found = find_answer(answer, question, source, satisfied=satisfied)
        if (
            found is not None
            and found.related
            and found.complete
            and own <= numbers_in(found.clause)
        ):
            return True
    return False


def _title_of(source: str | Source) -> str:
    return source.title if isinstance(source, Source) else ""


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
    "Choice",
    "Claim",
    "Fact",
    "about",
    "answer_in_sources",
    "answer_kind",
    "bare_title",
    "bridges",
    "choice",
    "chosen_name",
    "claim_verdict",
    "clauses",
    "comparative",
    "compared",
    "comparison_facts",
    "comparison_sides",
    "decided",
    "family",
    "find_answer",
    "fits_kind",
    "hop_value",
    "items_named",
    "link_text",
    "list_candidates",
    "list_evidence",
    "list_items",
    "list_size",
    "maker",
    "missing_sides",
    "named_entities",
    "readable",
    "relation_in",
    "relation_words",
    "source_says",
    "states",
    "subject_words",
    "yes_or_no",
)
