"""Rules that read what a free task asks in lower-case words (task_extract.py reads its
numbers, dates and names; both add to one `Found`).

A task's numbers and names are easy to see; much of what it asks is not: "a survey
*about burnout*", "contain the attack *by resetting passwords*", "a *vegan* dinner",
"*and inform the customers*". A plan can leave those out and still name every number, so
each shape of English that states one becomes a constraint too. Each rule is a shape,
never one task's wording:

- topics: "about X", "on X and Y" (no article after "on": "on the roof" is a place) →
  one requirement for each noun phrase, addressed by its words;
- means: "by VERB-ing OBJ (and VERB-ing OBJ)" → one requirement each, addressed by a step
  doing the verb or naming a word of the object (light verbs like "doing" are the
  object's: "by doing 10 mock tests" is the quantity's);
- further acts: "..., and VERB the OBJ" (a verb with an article'd object after the
  task's first clause: "and inform the customers") → addressed by the verb or the
  object's noun;
- qualifiers: diets and "-free" / "-friendly" words ("vegan", "gluten-free",
  "pet-friendly") → each its own requirement, named as written;
- dish names: the words that name a dish ("a *chocolate* cake", "*sourdough* bread") →
  each its own requirement.
"""

from __future__ import annotations

import re

from guardsearch.apps.plan.task_spec import Constraint
from guardsearch.apps.plan.task_text import STOP_WORDS, words


class Found:
    """Constraints found so far, with the spans of the task they used (not read twice)."""

    def __init__(self) -> None:
        self.items: list[Constraint] = []
        self.spans: list[tuple[int, int]] = []

    def free(self, start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in self.spans)

    def add(self, span: tuple[int, int], kind: str, text: str, **fields: object) -> None:
        if not self.free(*span):
            return
        self.spans.append(span)
        same = sum(1 for c in self.items if c.kind == kind)
        ident = kind if not same else f"{kind}-{same + 1}"
        self.items.append(Constraint(id=ident, kind=kind, text=text.strip(), **fields))  # type: ignore[arg-type]


# Where a lower-case noun phrase ends: punctuation, a preposition or conjunction, or a
# verb of the next clause in -ing ("in the city park raising ...").
END = (
    r"(?=\s*(?:$|[,.;:!?]|\b(?:and|or|but|for|in|on|at|by|to|with|without|within|before|"
    r"after|from|during|until|this|next|over|of|that|so|while|then|[a-z]+ing)\b))"
)
_NP = r"[a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,2}?"
_TOPIC = re.compile(
    rf"\b(?:about|regarding|concerning)\s+(?:(?:the|a|an|their|our|its|his|her)\s+)?"
    rf"(?P<np>{_NP}){END}|\bon\s+(?P<onp>{_NP}){END}"
)
_AND_NP = re.compile(rf"\s*(?:,\s*|\s+)(?:and|or)\s+(?P<np>{_NP}){END}")
# What follows "on" that is no topic: a manner or a time ("on time", "on call").
_NOT_TOPICS = frozenset(
    words(
        "time call foot site budget schedule track average demand board top hold weekends "
        "weekdays weekday weekend arrival request purpose"
    )
)
_MEANS = re.compile(rf"\bby\s+(?P<verb>[a-z]+ing)\s+(?P<obj>{_NP}){END}")
_AND_MEANS = re.compile(rf"\s*(?:,\s*|\s+)(?:and|or)\s+(?P<verb>[a-z]+ing)\s+(?P<obj>{_NP}){END}")
_LIGHT_VERBS = frozenset(("doing", "making", "having", "getting", "taking", "using", "being"))
_DET = r"(?:the|a|an|our|my|their|its|all|every|each|his|her|your)"
_ACT = re.compile(
    rf"(?:,\s*|\b(?:and|then)\s+)(?:then\s+)?(?P<verb>[a-z]{{3,}})\s+{_DET}\s+"
    rf"(?P<obj>{_NP}){END}"
)
_QUALIFIER = re.compile(
    r"\b(?:vegan|vegetarian|pescatarian|halal|kosher|keto|paleo|organic|low-carb|low-fat|"
    r"low-sugar|wheelchair-accessible|[a-z]+-free|[a-z]+-friendly)\b",
    re.I,
)
_DISHES = (
    r"cakes?|bread|loaf|soup|pie|salad|curry|stew|pasta|pizza|risotto|dinner|lunch|"
    r"breakfast|brunch|meal|dish|dessert|cookies|muffins|sauce|lasagna|tart|roast|casserole|"
    r"sandwiches|pancakes|biscuits|buns|cupcakes"
)
_DISH = re.compile(rf"\b(?P<mods>(?:[a-z][a-z-]*\s+){{1,2}})(?P<head>{_DISHES})\b")
# Words before a dish that do not name it: the verb making it, counts, articles.
_NOT_DISH = frozenset(
    words("bake cook make prepare serve roast grill fry boil host plan throw homemade simple")
)


def _np_terms(np: str) -> list[str]:
    """A noun phrase as a term a step must say (its content words), or none."""
    found = [w for w in np.split() if w.lower() not in STOP_WORDS]
    return [" ".join(found)] if found and words(" ".join(found)) else []


def _has_function_word(np: str) -> bool:
    """Is there an article or a pronoun in `np` ("publish it", "write the report": the
    next clause, not a second topic)?"""
    return any(w.lower() in STOP_WORDS or w.lower() in _PRONOUNS for w in np.split())


_PRONOUNS = frozenset(("it", "them", "him", "her", "us", "me", "you", "they", "we"))


def topics(task: str, found: Found) -> None:
    """What the task is about ("a survey about burnout", "papers on sleep and memory")."""
    for m in _TOPIC.finditer(task):
        group = "np" if m.group("np") else "onp"
        spans = [(m.span(group), m.group(group))]
        rest = _AND_NP.match(task, m.end(group))
        while rest is not None and not _has_function_word(rest.group("np")):
            spans.append((rest.span("np"), rest.group("np")))  # "on sleep and memory"
            rest = _AND_NP.match(task, rest.end("np"))
        for span, np in spans:
            terms = _np_terms(np)
            if terms and not set(words(np)) & _NOT_TOPICS and not _has_function_word(np):
                found.add(span, "requirement", np, terms=terms)


def _object_terms(verb: str, obj: str) -> list[str]:
    """A step does what the task names when it says the verb or a word of its object
    ("two-factor login": factor or login; a count alone names nothing)."""
    tokens = [t for t in re.split(r"[\s-]+", obj) if t.lower() not in STOP_WORDS]
    kept = [t for t in tokens if words(t) and not words(t)[0][0].isdigit()]
    return [verb, *kept][:8]


def means(task: str, found: Found) -> None:
    """How the task says to do it ("by resetting passwords and enabling two-factor login")."""
    for m in _MEANS.finditer(task):
        parts = [m]
        rest = _AND_MEANS.match(task, m.end("obj"))
        while rest is not None:
            parts.append(rest)
            rest = _AND_MEANS.match(task, rest.end("obj"))
        for part in parts:
            verb, obj = part.group("verb").lower(), part.group("obj")
            if verb in _LIGHT_VERBS or re.search(r"\d", obj):
                continue
            found.add((part.start("verb"), part.end("obj")), "requirement",
                      f"{verb} {obj}", terms=_object_terms(verb, obj))  # fmt: skip


def acts(task: str, found: Found) -> None:
    """A further thing the task says to do ("..., and inform the customers"), past its
    first clause: addressed by a step doing the verb or acting on the object's noun."""
    for m in _ACT.finditer(task):
        verb, obj = m.group("verb").lower(), m.group("obj")
        if verb in STOP_WORDS or not words(verb) or re.search(r"\d", obj):
            continue
        if re.match(r"\s+with\b", task[m.end("obj") :]):
            continue  # "prepare the flat with a crate": the with-phrase says what it is
        noun = [t for t in obj.split() if t.lower() not in STOP_WORDS][-1:]
        found.add((m.start("verb"), m.end("obj")), "requirement", f"{verb} {obj}",
                  terms=[verb, *noun])  # fmt: skip


def qualifiers(task: str, found: Found) -> None:
    """A diet or a "-free" / "-friendly" quality ("a vegan dinner", "gluten-free")."""
    for m in _QUALIFIER.finditer(task):
        found.add(m.span(), "requirement", m.group(0), terms=[m.group(0).lower()])


def dish_names(task: str, found: Found) -> None:
    """The words naming a dish ("a chocolate cake"): the dish is not made without them."""
    for m in _DISH.finditer(task):
        at = m.start("mods")
        for word in m.group("mods").split():
            at = task.index(word, at)
            span, at = (at, at + len(word)), at + len(word)
            key = words(word)
            if not key or key[0][0].isdigit() or set(key) & _NOT_DISH:
                continue
            found.add(span, "requirement", f"{word} {m.group('head')}", terms=[word])
