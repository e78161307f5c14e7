"""Labelled cases for the research-support guard on every answer type.

`research-answer-types`: the synthesis guard (`synthesis_guard.judge_draft`, as the
loop runs it with `Source`s) on the questions of the wide evaluation's builders
(guardbench/wide_questions.py, a seed of its own), one right and one or two wrong
drafts per question. The shape is `TYPE-right`, `TYPE-right-sentence` or
`TYPE-wrong-WHY`:

- right: the gold answer bare ("1945") citing the article that states it, and in a
  sentence ("Heinrich Himmler died in 1945 [1].");
- wrong, of the same type so that only the guard's reading can tell:
  dates: the article's *other* year (the death year for a birth question), or a year
  the article does not give; numbers: a number the article does not give; places,
  people, organisations, titles: the answer of another question of the same type
  citing the article; lists: two items of another question's list; definitions: another
  article's description; two hops: the work's own year citing the work's article (the
  film's year for its director's birth year); yes/no: the wrong word with the two true
  years as its reason; unanswerable: any answer (a year, a number) citing what was
  retrieved.

Sources for each case are the articles the question needs and one unrelated article,
ids in a seeded order. The held-out half (with_splits) is never tuned on.
"""

from __future__ import annotations

import random
import re
from typing import Any

from guardbench.cases import Case, balanced
from guardbench.corpus import articles
from guardbench.wide_questions import BUILDERS, WideQuestion

SEED = 3131
PER_LABEL = 330


def _sources(needed: list[str], rng: random.Random, avoid: set[str]) -> list[str]:
    pool = [t for t in articles() if t not in avoid]
    extra = rng.choice(pool)
    while extra in avoid or extra in needed:
        extra = rng.choice(pool)
    titles = [*needed, extra]
    rng.shuffle(titles)
    return titles


def _case(
    q: WideQuestion, n: int, shape: str, answer: str, cites: list[str], srcs: list[str]
) -> Case:
    return Case(
        guard="research-answer-types",
        id=f"{shape}-{n:03d}",
        label="pass" if "-right" in shape else "fail",  # type: ignore[arg-type]
        shape=shape,
        input={"question": q.question, "answer": answer, "citations": cites, "sources": srcs},
    )


def _years(text: str) -> list[str]:
    return re.findall(r"\b(1\d{3}|20\d{2})\b", text)


def _wrong(
    q: WideQuestion, others: list[WideQuestion], rng: random.Random
) -> list[tuple[str, str]]:
    """(why, answer) of wrong drafts for `q`, of its own type."""
    gold = q.answers[0] if q.answers else ""
    by_title = articles()
    own = by_title[q.articles[0]] if q.articles else None
    said = f"{own.description} {own.extract}" if own else ""
    if q.type == "choices":
        # "Which is older, A or B?": the wrong answer is the other one.
        return [("other-side", q.extra["other"])]
    if q.type == "claims":
        # A one-claim yes/no question's wrong answer is the other verdict.
        return [("flipped", "no" if gold == "yes" else "yes")]
    if q.type in ("dates",):
        other_years = [y for y in _years(said) if y != gold]
        out = [("other-year", other_years[0])] if other_years else []
        absent = str(int(gold) + 7)
        if absent not in said:
            out.append(("absent-year", absent))
        return out
    if q.type == "numbers":
        digits = re.sub(r"[^\d]", "", gold) or "1"
        return [("absent-number", f"{int(digits) * 2 + 13:,}")]
    if q.type == "twohop":
        work = by_title[q.articles[0]]
        years = [y for y in _years(work.description + " " + work.extract) if y != gold]
        return [("work-year", years[0])] if years else []
    if q.type == "yesno":
        return []  # built in `cases`, with its reasons
    if q.type == "unanswerable":
        return [
            ("any-year", str(rng.randint(1700, 1950))),
            ("any-number", f"{rng.randint(2, 900)},000"),
        ]
    mates = [o for o in others if o.type == q.type and o.answers and o is not q]
    rng.shuffle(mates)
    for mate in mates:
        if q.type == "lists":
            items = [i for i in mate.answers if i not in q.answers][:2]
            if len(items) == 2:
                return [("other-list", f"{items[0]} and {items[1]}")]
        elif q.type == "definitions":
            desc = mate.extra.get("description", "")
            if desc and not set(desc.lower().split()) & {a.lower() for a in q.answers}:
                return [
                    (
                        "other-description",
                        f"{q.question.split(' is ')[0].split('what ')[-1]} is {desc.lower()}",
                    )
                ]
        elif mate.answers[0].lower() not in said.lower():
            return [("other-answer", mate.answers[0])]
    return []


def _right(q: WideQuestion) -> list[tuple[str, str]]:
    gold = q.answers[0]
    if q.type == "lists":
        return [("right", f"{q.answers[0]} and {q.answers[1]}")]
    if q.type == "definitions":
        desc = q.extra.get("description", "")
        name = q.articles[0]
        return [("right", f"{name} is a {desc[0].lower()}{desc[1:]}")] if desc else []
    if q.type == "choices":
        return [("right", gold), ("right-sentence", f"It is {gold}.")]
    name = re.sub(r"\s*\([^)]*\)$", "", q.articles[-1])
    return [("right", gold), ("right-sentence", f"{name}: {gold}")]


def cases(exclude: set[str] | frozenset[str] = frozenset()) -> list[Case]:
    """Every type's cases, leaving out questions that touch an article of `exclude`
    (the research evaluation sets and the frozen fresh held-out set)."""
    made: list[WideQuestion] = []
    for name, builder in BUILDERS.items():
        made += [
            q
            for q in builder(random.Random(f"{SEED}-{name}"))
            if not set(q.articles) & exclude and not set(q.answers) & exclude
        ]
    rng = random.Random(SEED)
    avoid = set(exclude)
    out: list[Case] = []
    for n, q in enumerate(made):
        if q.type == "yesno":
            out += _yesno(q, n, rng, avoid)
            continue
        srcs = _sources(q.articles, rng, avoid)
        if not q.articles:
            # an absent subject: what was retrieved is about something else
            srcs = _sources([rng.choice([t for t in articles() if t not in avoid])], rng, avoid)
        cite = [f"[{srcs.index(q.articles[-1]) + 1}]"] if q.articles else ["[1]"]
        if q.type != "unanswerable":
            for why, answer in _right(q):
                both = q.type in ("twohop", "choices")
                ids = [f"[{srcs.index(t) + 1}]" for t in q.articles] if both else cite
                out.append(_case(q, n, f"{q.type}-{why}", f"{answer} {' '.join(ids)}", ids, srcs))
        for why, answer in _wrong(q, made, rng):
            wrong_cite = cite if q.type != "twohop" else [f"[{srcs.index(q.articles[0]) + 1}]"]
            if q.type == "choices":
                wrong_cite = [f"[{srcs.index(t) + 1}]" for t in q.articles]
            out.append(
                _case(q, n, f"{q.type}-wrong-{why}", f"{answer} {wrong_cite[0]}", wrong_cite, srcs)
            )
    passing = [c for c in out if c.label == "pass"]
    failing = [c for c in out if c.label == "fail"]
    return balanced(passing, failing, PER_LABEL, rng)


def _yesno(q: WideQuestion, n: int, rng: random.Random, avoid: set[str]) -> list[Case]:
    from guardbench.wide_questions import _person  # the lifespan reader of the builders

    by_title = articles()
    a, b = (by_title[t] for t in q.articles)
    (ab, ad), (bb, _) = _person(a), _person(b)  # type: ignore[misc]
    srcs = _sources(q.articles, rng, avoid)
    ia, ib = (f"[{srcs.index(t) + 1}]" for t in q.articles)
    first = ad if "die before" in q.question else ab
    verb = "died" if "die before" in q.question else "was born"
    reason = f"{_name(a.title)} {verb} in {first} {ia} and {_name(b.title)} was born in {bb} {ib}."
    right, wrong = q.answers[0].capitalize(), ("No" if q.answers[0] == "yes" else "Yes")
    return [
        _case(q, n, "yesno-right", f"{right}. {reason}", [ia, ib], srcs),
        _case(q, n, "yesno-wrong-flipped", f"{wrong}. {reason}", [ia, ib], srcs),
    ]


def _name(title: str) -> str:
    return re.sub(r"\s*\([^)]*\)$", "", title)


def describe(case: Case) -> dict[str, Any]:
    return case.input
