"""Labelled cases for the guards of `find` (apps/find), drawn from the corpus.

`find-type-rule` (rules.type_rejection: is this article one item of the type?):
pass `attributed-work` ("1896 opera by Giacomo Puccini"), `dated-work` ("1942
American film"); fail `person-with-kind-word` (a biography whose description names
the kind: "Italian opera composer (1858–1924)"), `kind-compound` (the kind word
modifying another noun: "Annual film festival in France", "Film genre"),
`other-kind-work` (a work of another kind).

`find-evidence-rule` (act.qualifier_gaps on what the candidate's article and its
creator's article say): requests "KIND by NATIONALITY MAKERS" for works whose
creator's own description starts with a nationality. pass `own-nationality`; fail
`wrong-nationality-mentioned` (another nationality whose word still occurs in the
evidence: "translated into English") and `wrong-nationality-absent`.

`find-plan` (steps.plan_step's guard: the item type is the request's item noun):
pass `item-noun` / `item-noun-plural`; fail `maker-noun` ("painter" for "paintings by
Spanish painters") and `qualifier-word` ("Spanish").
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from guardbench.cases import Case, balanced
from guardbench.corpus import Article, articles
from guardsearch.apps.find.act import qualifier_gaps
from guardsearch.apps.find.rules import creator_of, is_person, type_rejection
from guardsearch.apps.find.spec import FindSpec, plural
from guardsearch.apps.find.steps import JudgeDraft, judge_step, plan_step
from guardsearch.apps.find.verify import _cut
from guardsearch.core.artifact import Artifact
from guardsearch.core.context import Context
from guardsearch.core.errors import StepFailed
from guardsearch.models.metered import Metered
from guardsearch.steps.step import run_step

SEED = 2424
MAKERS = {
    "painting": "painters",
    "novel": "novelists",
    "novella": "writers",
    "opera": "composers",
    "ballet": "composers",
    "symphony": "composers",
    "film": "directors",
    "play": "playwrights",
    "poem": "poets",
    "sculpture": "sculptors",
    "album": "musicians",
    "song": "songwriters",
}
KINDS = tuple(MAKERS)
NATIONALITIES = (
    "American", "Austrian", "Belgian", "Brazilian", "British", "Chinese", "Colombian",
    "Danish", "Dutch", "English", "French", "German", "Greek", "Indian", "Irish",
    "Italian", "Japanese", "Mexican", "Nigerian", "Norwegian", "Persian", "Polish",
    "Portuguese", "Russian", "Scottish", "Soviet", "Spanish", "Swedish",
)  # fmt: skip
# Nationalities one person's description may carry together: never a wrong answer.
_RELATED = ({"English", "British", "Scottish", "Irish"}, {"Russian", "Soviet"})
_COMPOUND_NOUNS = (
    "director", "directors", "producer", "composer", "composers", "house", "festival",
    "genre", "technique", "style", "studio", "studios", "company", "dancer",
    "choreographer", "industry", "award", "theatre", "singer", "tenor", "critic", "actor",
    "actress", "series", "competition", "cycle", "collection",
)  # fmt: skip


def _kind_in(description: str, kind: str) -> bool:
    return re.search(rf"\b{kind}s?\b", description, re.I) is not None


def _truth_type(article: Article, kind: str) -> tuple[str, str] | None:
    """(label, shape) for `article` as a candidate `kind`, or None if no rule decides."""
    desc = article.description
    year = r"(?:\d{4}(?:[–-]\d{2,4})?|\d+(?:st|nd|rd|th)[- ]century)"
    if not _kind_in(desc, kind):
        return None
    if is_person(desc):
        return "fail", "person-with-kind-word"
    if re.search(rf"\b{kind}s? ({'|'.join(_COMPOUND_NOUNS)})\b", desc, re.I):
        return "fail", "kind-compound"
    if re.match(rf"^(?:{year} )?(?:[\w'\-]+ ){{0,3}}{kind} (?:by|attributed to) [A-Z]", desc, re.I):
        return "pass", "attributed-work"
    if re.match(rf"^{year} (?:[\w'\-]+ ){{0,3}}{kind}$", desc, re.I):
        return "pass", "dated-work"
    return None


def type_cases() -> list[Case]:
    rng = random.Random(SEED)
    passing: list[Case] = []
    failing: list[Case] = []
    works: list[tuple[Article, str]] = []
    for title, article in articles().items():
        for kind in KINDS:
            truth = _truth_type(article, kind)
            if truth is None:
                continue
            label, shape = truth
            if label == "pass":
                works.append((article, kind))
            case = _type_case(f"{shape}-{kind}-{title}", label, shape, article, kind)
            (passing if label == "pass" else failing).append(case)
    for article, kind in works:
        other = rng.choice([k for k in KINDS if k != kind])
        if not _kind_in(article.description, other):
            failing.append(
                _type_case(
                    f"other-kind-work-{other}-{article.title}",
                    "fail",
                    "other-kind-work",
                    article,
                    other,
                )
            )
    return balanced(passing, failing, 50, rng)


def _type_case(ident: str, label: str, shape: str, article: Article, kind: str) -> Case:
    return Case(
        guard="find-type-rule",
        id=ident,
        label=label,  # type: ignore[arg-type]
        shape=shape,
        input={"item_type": kind, "title": article.title, "description": article.description},
    )


def nationality(description: str) -> str | None:
    first = description.split()[0] if description.split() else ""
    return first if first in NATIONALITIES else None


def _related(a: str, b: str) -> bool:
    return a == b or any(a in group and b in group for group in _RELATED)


def evidence_text(work: Article, creator: Article) -> str:
    """What `CorpusActor.evidence` gives the rule: the work's description and summary,
    then the creator's (apps/find/act.py)."""
    own = f"{work.description}. {work.extract}"
    return f"{own}\n{creator.title}: {creator.description}. {creator.extract}"


def evidence_cases() -> list[Case]:
    rng = random.Random(SEED + 1)
    by_title = articles()
    passing: list[Case] = []
    failing: list[Case] = []
    for title, work in by_title.items():
        name = creator_of(work.description)
        creator = by_title.get(name)
        kind = next((k for k in KINDS if re.search(rf"\b{k}\b", work.description, re.I)), None)
        if creator is None or kind is None or not is_person(creator.description):
            continue
        own = nationality(creator.description)
        if own is None:
            continue
        evidence = evidence_text(work, creator)
        others = [n for n in NATIONALITIES if not _related(n, own)]
        mentioned = [n for n in others if re.search(rf"\b{n}\b", evidence)]
        absent = [n for n in others if n not in mentioned]
        passing.append(_evidence_case("own-nationality", "pass", title, kind, own, evidence))
        if mentioned:
            wrong = rng.choice(mentioned)
            failing.append(
                _evidence_case("wrong-nationality-mentioned", "fail", title, kind, wrong, evidence)
            )
        wrong = rng.choice(absent)
        failing.append(
            _evidence_case("wrong-nationality-absent", "fail", title, kind, wrong, evidence)
        )
    return balanced(passing, failing, 60, rng)


def _evidence_case(shape: str, label: str, title: str, kind: str, who: str, evidence: str) -> Case:
    request = f"{plural(kind)} by {who} {MAKERS[kind]}"
    return Case(
        guard="find-evidence-rule",
        id=f"{shape}-{title}",
        label=label,  # type: ignore[arg-type]
        shape=shape,
        input={
            "request": request,
            "item_type": kind,
            "qualifier": f"by {who} {MAKERS[kind]}",
            "work": title,
        },
        note=f"creator nationality per the creator's description; asked: {who}",
    )


def plan_cases() -> list[Case]:
    rng = random.Random(SEED + 2)
    passing: list[Case] = []
    failing: list[Case] = []
    for kind in KINDS:
        for who in NATIONALITIES:
            request = f"{plural(kind)} by {who} {MAKERS[kind]}"
            maker = MAKERS[kind].removesuffix("s")
            for shape, label, item in (
                ("item-noun", "pass", kind),
                ("item-noun-plural", "pass", plural(kind)),
                ("maker-noun", "fail", maker),
                ("qualifier-word", "fail", who),
            ):
                case = Case(
                    guard="find-plan",
                    id=f"{shape}-{kind}-{who}",
                    label=label,  # type: ignore[arg-type]
                    shape=shape,
                    input={"request": request, "draft": _plan_draft(item, who, kind)},
                )
                (passing if label == "pass" else failing).append(case)
    return balanced(passing, failing, 50, rng)


def _plan_draft(item_type: str, who: str, kind: str) -> dict[str, Any]:
    return {
        "reflection": {
            "plan": f"search for {plural(kind)} and check who made them",
            "assumptions": [],
            "risks": [],
            "success_criteria": f"each item is a {kind} by a {who} maker",
        },
        "item_type": item_type,
        "qualifier": f"by {who} {MAKERS[kind]}",
        "keywords": [kind, who],
        "domain": "art",
    }


# -- judging -----------------------------------------------------------------------------


def judge_type(case: Case) -> bool:
    return type_rejection(case.input["description"], case.input["item_type"]) is None


def judge_evidence(case: Case) -> bool:
    data = case.input
    by_title = articles()
    work = by_title[data["work"]]
    creator = by_title[creator_of(work.description)]
    spec = FindSpec(item_type=data["item_type"], qualifier=data["qualifier"], keywords=("x",))
    said = (creator.description, creator.extract)
    return not qualifier_gaps(spec, (work.description, work.extract), said)


async def judge_plan(case: Case) -> bool:
    step = plan_step(case.input["request"])
    assert step.checker is not None
    value = case.input["draft"]
    artifact = Artifact(id="case", step=step.name, text=json.dumps(value), value=value)
    verdict = await step.checker.check(artifact, Context(objective=case.input["request"]))
    return verdict.passed


async def judge_model(case: Case, model: Metered) -> bool:
    """The model judge of verify.py alone (the rules' verdict aside), shown what it is
    shown in a run: the type, the qualifier, the article and the cut evidence."""
    data = case.input
    by_title = articles()
    work = by_title[data["work"]]
    creator = by_title[creator_of(work.description)]
    variables = {
        "item_type": data["item_type"],
        "qualifier": data["qualifier"],
        "title": work.title,
        "description": work.description,
        "evidence": _cut(evidence_text(work, creator)),
    }
    try:
        outcome = await run_step(
            judge_step(), Context(objective=data["request"]), model, variables=variables
        )
    except StepFailed:
        return False
    return JudgeDraft.model_validate(outcome.value).answer == "yes"


async def judge_verifier(case: Case, model: Metered) -> bool:
    """The verifier as a find run applies it: the type rule and the evidence rule, and
    the model judge only on what they pass (apps/find/verify.py)."""
    work = articles()[case.input["work"]]
    if type_rejection(work.description, case.input["item_type"]) is not None:
        return False
    if not judge_evidence(case):
        return False
    return await judge_model(case, model)
