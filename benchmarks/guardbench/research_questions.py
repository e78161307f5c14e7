"""The second research evaluation set: question shapes the first eval lacks.

Two shapes, both answered by an article's title, drawn from the embedded summaries:

- `description`: the article's short description -> its title ("Which subject is
  described as: Grand Prince of Kiev from 978 to 1015?"). Kept when the description
  is unique in the corpus, specific (a number or a name in it), shares no word with
  the title, and the article's own summary states the title.
- `fact`: a distinctive sentence of the extract (not its first, which names the
  subject) -> the title ('Which subject is this about: "..."?'). Kept when the
  sentence names nothing of the title and has at least two words found in at most
  two articles, so the fact points at one article.

Articles of the first eval (`research_eval.build_questions`) are left out. Each shape
is shuffled with the seed and split in half: `tune` (prompts and judges may be tuned
on it) and `heldout` (never tuned on; the figure the issue asks for).
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Collection
from dataclasses import asdict, dataclass
from typing import Any

from guardbench.corpus import Article, articles, bare_title, content_words, document_frequency
from guardbench.corpus import sentences as split_sentences

SEED = 16
PER_SHAPE = 60
# The fresh held-out set (built 2026-11-27, after the second set's held-out half had
# been read while tuning): other articles, another seed, every question held out.
FRESH_SEED = 1127
FRESH_PER_SHAPE = 30
_CAPITALISED = re.compile(r"\b[A-Z][a-z]")


@dataclass(frozen=True)
class ResearchQuestion:
    id: str
    question: str
    expected: str
    article: str
    kind: str
    split: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def fold(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()


def expected_answer(title: str) -> str:
    """What a right answer must contain: the title without a parenthesis or a leading
    article ("The Beatles" -> "Beatles")."""
    return re.sub(r"^(?:The|A|An) ", "", bare_title(title))


def answerable(article: Article) -> bool:
    """A plain title that the article's own summary states."""
    title = article.title
    if "(" in title or "," in title or len(content_words(title)) == 0:
        return False
    return fold(expected_answer(title)) in fold(article.extract)


def _shares_title_word(text: str, title: str) -> bool:
    words = content_words(title)
    lowered = fold(text)
    return bool(words & content_words(text)) or fold(bare_title(title)) in lowered


def description_candidates(exclude: Collection[str] = ()) -> list[tuple[Article, str]]:
    """(article, question) for every article the description shape can use."""
    pool = articles()
    seen: dict[str, int] = {}
    for article in pool.values():
        key = article.description.lower()
        seen[key] = seen.get(key, 0) + 1
    out = []
    for title, article in pool.items():
        desc = article.description.rstrip(".")
        if title in exclude or not desc or seen[article.description.lower()] > 1:
            continue
        if not 4 <= len(desc.split()) <= 14 or not answerable(article):
            continue
        specific = any(c.isdigit() for c in desc) or bool(_CAPITALISED.search(desc[1:]))
        if specific and not _shares_title_word(desc, title):
            out.append((article, f"Which subject is described as: {desc}?"))
    return out


def distinctive_sentence(article: Article) -> str | None:
    """The first sentence after the opening one that hides the title and has two rare
    words (in at most two articles), or None."""
    df = document_frequency()
    for sentence in split_sentences(article.extract)[1:]:
        words = sentence.split()
        if not 10 <= len(words) <= 35 or '"' in sentence:
            continue
        if _shares_title_word(sentence, article.title):
            continue
        if sum(1 for w in content_words(sentence) if df[w] <= 2) >= 2:
            return sentence
    return None


def fact_candidates(exclude: Collection[str] = ()) -> list[tuple[Article, str]]:
    out = []
    for title, article in articles().items():
        if title in exclude or not answerable(article):
            continue
        sentence = distinctive_sentence(article)
        if sentence is not None:
            out.append((article, f'Which subject is this about: "{sentence}"'))
    return out


def build(
    exclude: Collection[str] = (), seed: int = SEED, per_shape: int = PER_SHAPE
) -> list[ResearchQuestion]:
    """`per_shape` questions of each shape on distinct articles, half `tune`, half
    `heldout` per shape, in a stable order."""
    rng = random.Random(seed)
    used: set[str] = set(exclude)
    out: list[ResearchQuestion] = []
    for kind, candidates in (
        ("description", description_candidates(used)),
        ("fact", fact_candidates(used)),
    ):
        pool = [(a, q) for a, q in candidates if a.title not in used]
        chosen = rng.sample(pool, min(per_shape, len(pool)))
        cut = (len(chosen) + 1) // 2
        for i, (article, question) in enumerate(chosen):
            used.add(article.title)
            out.append(
                ResearchQuestion(
                    id=f"{kind}-{i + 1:03d}",
                    question=question,
                    expected=expected_answer(article.title),
                    article=article.title,
                    kind=kind,
                    split="tune" if i < cut else "heldout",
                )
            )
    return out


def fresh(exclude: Collection[str]) -> list[ResearchQuestion]:
    """`FRESH_PER_SHAPE` questions of each shape on articles none of `exclude`, all held
    out: the set a figure is reported on once nothing may be tuned on it any more."""
    return [
        ResearchQuestion(
            id=f"fresh-{q.id}",
            question=q.question,
            expected=q.expected,
            article=q.article,
            kind=q.kind,
            split="heldout",
        )
        for q in build(exclude, seed=FRESH_SEED, per_shape=FRESH_PER_SHAPE)
    ]
