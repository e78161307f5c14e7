"""Labelled cases for the research loop's guards.

`research-support`: the synthesis guard (`phases.synthesize_step`: an answer with
words, not only the question's, and a cited source that exists and supports it, by
the run's support check). Each case is a question, an answer with its citation ids
and the retrieved sources (article titles, ids [1].. in order: the question's own
article, the article the wrong answer comes from, and a third). Labels come from how
the case was made:

pass shapes
- `title-bare`: description -> title question, the title alone, citing its article;
- `title-sentence`: "The subject described is TITLE [n].";
- `opening-sentence`: the article's first sentence (which names it), citing it;
- `work-creator`: the first eval's shape ("Who painted X?"), the creator's full name
  citing the work's article.
fail shapes
- `wrong-title-bare` / `wrong-title-sentence`: the next question's title, citing that
  title's own article (true of that article, not the answer);
- `wrong-article-sentence`: a true sentence from the wrong article (its first one);
- `work-wrong-creator`: another work's creator, citing that other work's article;
- `right-title-unrelated-source`: the right title citing a source that never
  mentions it.

`research-plan`: the loop's rule that queries with the same words are one query
(`ResearchState.with_queries`; it was the planner's guard until the guard's retries
were found to end runs that needed no plan). Queries built from the
question's words: pass when they differ in their
words, fail when they are the same words (in any order or case), since BM25 ranks
the same words the same.

Articles of both research evaluation sets (and the 23 questions the first eval runs)
are left out, so nothing tuned on these cases is tuned on an evaluation question.
"""

from __future__ import annotations

import json
import random
from collections.abc import Collection
from typing import Any

from guardbench.cases import Case, balanced
from guardbench.corpus import Article, articles, bare_title, sentences
from guardbench.research_questions import description_candidates
from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.source import Source
from guardsearch.loops.research.citations import support_judge
from guardsearch.loops.research.config import ResearchConfig
from guardsearch.loops.research.phases import synthesize_step
from guardsearch.loops.research.state import Query, ResearchState
from guardsearch.steps.step import Step

SEED = 1616
PER_LABEL = 120


def _sources(own: Article, other: Article, third: Article, rng: random.Random) -> list[str]:
    titles = [own.title, other.title, third.title]
    rng.shuffle(titles)
    return titles


def _cite(sources: list[str], title: str) -> str:
    return f"[{sources.index(title) + 1}]"


def _third(pool: list[Article], avoid: set[str], rng: random.Random) -> Article:
    while True:
        pick = rng.choice(pool)
        if pick.title not in avoid:
            return pick


def _support(shape: str, n: int, question: str, answer: str, cite: str, sources: list[str]) -> Case:
    label = "fail" if shape.startswith(("wrong", "work-wrong", "right-title-unrelated")) else "pass"
    return Case(
        guard="research-support",
        id=f"{shape}-{n:03d}",
        label=label,  # type: ignore[arg-type]
        shape=shape,
        input={"question": question, "answer": answer, "citations": [cite], "sources": sources},
    )


def support_cases(
    exclude: Collection[str], work_questions: list[tuple[str, str, str]]
) -> list[Case]:
    """`work_questions`: (question, creator's full name, article) of the first eval's
    shape, outside the questions that eval runs."""
    rng = random.Random(SEED)
    candidates = description_candidates(exclude)
    questions = {a.title: q for a, q in candidates}
    pool = [a for a, _ in candidates]
    rng.shuffle(pool)
    everything = [a for a in articles().values() if a.title not in exclude]
    cases: list[Case] = []
    for i, own in enumerate(pool[:200]):
        other = pool[(i + 1) % len(pool)]
        question = questions[own.title]
        third = _third(everything, {own.title, other.title}, rng)
        srcs = _sources(own, other, third, rng)
        right, wrong = bare_title(own.title), bare_title(other.title)
        mine, theirs = _cite(srcs, own.title), _cite(srcs, other.title)
        first_own, first_other = sentences(own.extract)[0], sentences(other.extract)[0]
        made = [
            ("title-bare", right, mine),
            ("title-sentence", f"The subject described is {right} {mine}.", mine),
            ("opening-sentence", f"{first_own.rstrip('.')} {mine}.", mine),
            ("wrong-title-bare", wrong, theirs),
            ("wrong-title-sentence", f"The subject described is {wrong} {theirs}.", theirs),
            ("wrong-article-sentence", f"{first_other.rstrip('.')} {theirs}.", theirs),
        ]
        if right.lower() not in third.extract.lower():
            made.append(("right-title-unrelated-source", right, _cite(srcs, third.title)))
        cases += [_support(shape, i, question, a, c, srcs) for shape, a, c in made]
    by_title = articles()
    works = sorted(work_questions)
    rng.shuffle(works)
    for i, (question, creator, title) in enumerate(works):
        _, other_creator, other_title = works[(i + 1) % len(works)]
        if other_creator.split()[-1] == creator.split()[-1]:
            continue
        own, other = by_title[title], by_title[other_title]
        third = _third(everything, {title, other_title}, rng)
        srcs = _sources(own, other, third, rng)
        cases += [
            _support("work-creator", i, question, creator, _cite(srcs, title), srcs),
            _support(
                "work-wrong-creator", i, question, other_creator, _cite(srcs, other_title), srcs
            ),
        ]
    passing = [c for c in cases if c.label == "pass"]
    failing = [c for c in cases if c.label == "fail"]
    return balanced(passing, failing, PER_LABEL, rng)


def plan_cases(exclude: Collection[str]) -> list[Case]:
    """Planner outputs for description -> title questions: distinct queries (pass) or
    the same words again (fail)."""
    rng = random.Random(SEED + 1)
    candidates = description_candidates(exclude)
    rng.shuffle(candidates)
    passing: list[Case] = []
    failing: list[Case] = []
    for i, (article, question) in enumerate(candidates[:60]):
        desc = article.description
        words = desc.split()
        half = len(words) // 2
        distinct = [desc, " ".join(words[:half]), " ".join(words[half:])]
        shuffled = list(words)
        rng.shuffle(shuffled)
        variants = {
            "same-words-reordered": [desc, " ".join(shuffled), desc.lower()],
            "same-words-case": [desc, desc.upper(), f"  {desc.lower()} "],
        }
        passing.append(_plan_case("distinct", "pass", i, question, distinct))
        shape = "same-words-reordered" if i % 2 else "same-words-case"
        failing.append(_plan_case(shape, "fail", i, question, variants[shape]))
    return balanced(passing, failing, 50, rng)


def _plan_case(shape: str, label: str, i: int, question: str, queries: list[str]) -> Case:
    return Case(
        guard="research-plan",
        id=f"{shape}-{i:03d}",
        label=label,  # type: ignore[arg-type]
        shape=shape,
        input={
            "question": question,
            "draft": {
                "complexity": "simple",
                "queries": [{"query": q[:80], "intent": "find the subject"} for q in queries],
            },
        },
    )


# -- judging: the shipped guards, called as the loop calls them -------------------------


async def judge_support(
    case: Case, method: str = "lexical", model: object = None, *, as_sources: bool = False
) -> bool:
    """The synthesis guard's verdict on the case's answer (support by `method`). The loop
    hands the guard each source's text; `as_sources` hands it `Source`s instead (title
    and description too)."""
    by_title = articles()
    data = case.input
    sources: dict[str, Any] = {}
    for i, title in enumerate(data["sources"]):
        article = by_title[title]
        sources[f"[{i + 1}]"] = (
            Source(
                id=f"[{i + 1}]",
                title=title,
                description=article.description,
                text=article.extract,
                kind="wikipedia",
            )
            if as_sources
            else article.extract
        )
    judge = support_judge(method, model=model)  # type: ignore[arg-type]
    step = synthesize_step(ResearchConfig(support=method), sources, judge)  # type: ignore[arg-type]
    draft = {"answer": data["answer"], "citations": data["citations"]}
    return await _check(step, draft, data["question"])


async def judge_plan(case: Case) -> bool:
    """Whether the loop searches the plan's queries as different queries: it keeps
    more than one of them (`ResearchState.with_queries` drops a query with the same
    words as one before it). No guard sends a plan back since issue 16's research
    fix: a plan that repeats itself costs nothing, the task is searched anyway."""
    queries = [Query(query=q["query"]) for q in case.input["draft"]["queries"]]
    state = ResearchState(task=case.input["question"], max_iters=1).with_queries(queries)
    return len(state.plan_queries) > 1


async def _check(step: Step, value: dict[str, object], objective: str) -> bool:
    assert step.checker is not None
    artifact = Artifact(id="case", step=step.name, text=json.dumps(value), value=value)
    verdict = await step.checker.check(artifact, Context(objective=objective))
    return verdict.passed
