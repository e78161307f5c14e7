"""Code that reads a free task's spec from its text (task_spec.py says what a spec is).

Nothing here is keyed on one task: each rule is a shape of English that states a
constraint whatever the task is about —

- money: an amount with a currency ("2000 euros", "€2,000", "$500", "1.5k GBP") → budget;
- people: a count of a people noun ("12 people", "30 guests", "8 team members",
  "dinner for 6", "serves 4") → people;
- duration: a count of a time unit ("one-day", "3 weeks", "48 hours", "a weekend");
- dates and times: a month with its day, a month, a weekday, an ISO date, a clock time;
- places and names: capitalised words after a preposition or "visit" ("in Lisbon",
  "to New York", "from MySQL") → place;
- quantities: any other number with the noun it counts ("3 bedrooms", "99.9% uptime",
  "5 papers"), or a bare number ("Postgres 12 to 16") → quantity / number;
- names: any other capitalised word past the first ("Python", "Windows", "REST API")
  → requirement;
- deliverables: an artefact noun the task asks for ("a report", "slides", "a shopping
  list") → deliverable;
- order: "A before B", "B after A", "first A, then B" → a dependency.

The kind of task comes from which kind's words the task uses most (KIND_WORDS: general
vocabulary of events, trips, studying, software, homes, research, cooking, incidents);
none: `other`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from guardsearch.apps.plan.task_phrases import (
    END,
    Found,
    acts,
    dish_names,
    means,
    qualifiers,
    topics,
)
from guardsearch.apps.plan.task_spec import Constraint, Dependency, TaskSpec
from guardsearch.apps.plan.task_text import (
    FRACTION,
    STOP_WORDS,
    fraction_value,
    number_text,
    parse_number,
    stem,
    words,
)

_NUM = r"\d+(?:[.,]\d+)*(?:\s?k\b)?"
_WORDNUM = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|hundred|"
    r"a dozen|dozen"
)
_CURRENCY = {
    "€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR",
    "$": "USD", "usd": "USD", "dollar": "USD", "dollars": "USD",
    "£": "GBP", "gbp": "GBP", "pound": "GBP", "pounds": "GBP",
    "chf": "CHF", "franc": "CHF", "francs": "CHF", "yen": "JPY", "jpy": "JPY",
    "inr": "INR", "rupee": "INR", "rupees": "INR", "aud": "AUD", "cad": "CAD",
    "sek": "SEK", "nok": "NOK", "dkk": "DKK",
}  # fmt: skip
_CUR_WORDS = "|".join(sorted((k for k in _CURRENCY if k.isalpha()), key=len, reverse=True))
_MONEY = re.compile(
    rf"(?P<sym>[€$£])\s?(?P<n1>{_NUM})|(?P<n2>{_NUM})\s?(?P<cur>{_CUR_WORDS}|[€$£])(?![a-z])",
    re.I,
)
_PEOPLE_NOUNS = (
    r"people|persons|person|guests|attendees|participants|colleagues|employees|staff|friends|"
    r"kids|children|students|adults|members|engineers|developers|visitors|players|delegates|"
    r"volunteers|users|customers|teammates|coworkers|relatives|speakers|runners|patients|"
    r"travellers|travelers|hikers|diners|families|couples|pupils|learners|clients|workers"
)
_PEOPLE = re.compile(
    rf"\b(?P<n>{_NUM}|{_WORDNUM})\s+(?:[a-z-]+\s+){{0,2}}?(?P<noun>{_PEOPLE_NOUNS})\b"
    rf"|\b(?:family|group|team|party|crew|class|household)\s+of\s+(?P<n3>\d+|{_WORDNUM})\b"
    rf"|\b(?:for|serves|serving|feeds|feeding)\s+(?P<n2>\d+|{_WORDNUM})\b"
    r"(?=\s*(?:$|[,.;!?]|(?:and|on|at|in|for|with|by|this|next|who|that)\b))",
    re.I,
)
_UNITS = r"minute|hour|day|night|week|weekend|month|year|semester|term|sprint|evening|morning"
_DURATION = re.compile(
    rf"\b(?P<n>{_NUM}|{_WORDNUM}|a|an|half)[\s-]+(?:full[\s-]+)?(?P<unit>{_UNITS})s?\b", re.I
)
_RATE = re.compile(rf"(?:(?:\d+|{_WORDNUM})\s+(?:[a-z-]+\s+){{0,2}}|{FRACTION.pattern}\s+)$", re.I)
_MONTHS = (
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_FULL_MONTHS = _MONTHS.split("|jan|")[0]
_WEEKDAYS = r"monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_DATE = re.compile(
    rf"\b(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>{_MONTHS})\b"
    rf"|\b(?P<m2>{_MONTHS})\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"|\b(?P<iso>\d{{4}}-\d{{2}}-\d{{2}})\b"
    rf"|\b(?:in|by|before|until|during|this|next)\s+(?P<m3>{_FULL_MONTHS})\b(?!\s+\d)"
    rf"|\b(?P<wd>{_WEEKDAYS})s?\b",
    re.I,
)
_TIME = re.compile(r"\b(?P<t>\d{1,2}(?::\d{2})?\s?(?:am|pm)|\d{1,2}:\d{2})\b", re.I)
_CAP = r"[A-Z][\w'’.&+-]*"
_PLACE = re.compile(
    rf"\b(?:in|to|at|from|near|around|across|through|visit|visiting|via|into)\s+(?:the\s+)?"
    rf"(?P<place>{_CAP}(?:\s+(?:(?:de|da|del|la|le|of|upon|am|the)\s+)?{_CAP}){{0,3}})"
)
_QUANTITY = re.compile(
    rf"(?<![\w.,])(?P<n>{_NUM})\s*(?P<unit>%|[a-z]{{2,}})?"
    rf"|\b(?P<w>{_WORDNUM})(?P<sep>\s+|-)(?P<wunit>[a-z]{{3,}})\b",
    re.I,
)
_DELIVERABLES = (
    r"shopping list|packing list|slide deck|blog post|study guide|budget sheet|write-up|"
    r"post-mortem|postmortem|report|summary|presentation|slides|document|checklist|paper|"
    r"poster|menu|itinerary|schedule|agenda|timetable|memo|spreadsheet|dashboard|runbook|"
    r"playbook|proposal|article|video|map|flashcards|inventory|chart|invitations?|"
    r"newsletter|questionnaire|brief|handout|readme|changelog|announcement|tests?"
)
_ASKING_TEXT = "produce write deliver prepare create draft submit publish share send make with"
_ASKING_VERBS = frozenset(_ASKING_TEXT.split(" "))
_DELIVERABLE = re.compile(
    rf"\b(?:a|an|the|with|and|produce|write|deliver|prepare|create|draft|submit|publish|"
    rf"share|send|make)\s+(?P<mods>(?:[a-z0-9-]+\s+){{0,2}}?)(?P<noun>{_DELIVERABLES})\b",
    re.I,
)
_WITH = re.compile(
    r"\b(?:with|keeping|including|using)\s+(?:(?:a|an|the|our|my|their|new|old)\s+)?"
    r"(?:[a-z]+\s+){0,2}?(?P<noun>[a-z]{3,})(?=\s*(?:$|[,.;]|\b(?:and|or|for|in|on|by|to|"
    r"within|before|after|of)\b))",
    re.I,
)
# Nouns a "with ..." phrase ends on that are not a thing to do it with.
_NOT_TOPICS = frozenset(("budget", "downtime", "time", "help", "care", "respect"))
_OWN_PLACE = re.compile(
    r"\b(?:in|at|inside|outside)\s+(?:our|my|your|their|his|her|the)\s+(?:[a-z]+\s+)?"
    r"(?P<noun>[a-z]{3,})" + END,
)
# Nouns after "in the" / "at our" that are no place (times, manners).
_NOT_PLACES_TEXT = (
    "end morning evening afternoon night day week month year weekend meantime future past "
    "way case time process middle beginning"
)
_NOT_PLACES = frozenset(_NOT_PLACES_TEXT.split(" "))
_CLAUSE = re.compile(r"[.;:!?]|,|\b(?:and|then|but|while|before|after|first)\b", re.I)
_ORDER = re.compile(r"\b(?P<word>before|after)\s+", re.I)
_THEN = re.compile(r"(?:\bfirst\s+)?(?P<a>[^,.;]+?),?\s+(?:and\s+)?then\s+(?P<b>[^,.;]+)", re.I)

_KIND_TEXT: dict[str, str] = {
    "event": "offsite event party conference wedding meetup workshop seminar celebration "
    "reunion festival gala retreat team-building birthday ceremony hackathon launch concert "
    "fundraiser picnic summit anniversary banquet reception charity",
    "trip": "trip travel vacation holiday itinerary tour journey flight flights road "
    "backpacking honeymoon getaway sightseeing hotel hostel",
    "study_plan": "study learn exam exams course revise revision curriculum certification "
    "syllabus lesson lessons practice vocabulary grammar fluency tutor theory mock quiz "
    "textbook chapters flashcards reading",
    "software_change": "bug feature refactor implement endpoint api code function module "
    "library app release crash frontend backend login password regression request "
    "requests response limiting cache button",
    "data_migration": "migrate migration upgrade database schema postgres mysql transfer port "
    "move data cloud bucket warehouse files photos laptop reinstall wipe",
    "operations_runbook": "rotate backup backups certificate certificates deploy provision "
    "patch renew cluster server servers maintenance runbook monitoring downtime keys",
    "incident_response": "outage incident breach down compromised leak attack postmortem "
    "on-call latency errors degraded ransomware phishing",
    "home_project": "renovate renovation paint kitchen bathroom garden shelves roof floor "
    "tiles furniture decorate plumbing fence deck garage attic bedroom wall house apartment",
    "research_project": "research survey experiment literature thesis hypothesis dataset "
    "interviews analysis papers publication replicate study findings",
    "recipe": "cook bake recipe meal dish cake bread soup dinner lunch breakfast servings "
    "ingredients vegan vegetarian oven dessert",
}
# General vocabulary of each kind of task (not any one task's wording).
KIND_WORDS: dict[str, tuple[str, ...]] = {k: tuple(v.split()) for k, v in _KIND_TEXT.items()}


def kind_scores(task: str) -> dict[str, int]:
    """How many of each kind's words the task uses."""
    have = words(task)
    return {
        kind: sum(1 for w in dict.fromkeys(stem(v.lower()) for v in vocab) if w in have)
        for kind, vocab in KIND_WORDS.items()
    }


def task_kind(task: str) -> str:
    """The kind whose words the task uses most (a tie: the first listed); none: other."""
    scores = kind_scores(task)
    best = max(scores.values())
    return next(k for k, s in scores.items() if s == best) if best else "other"


def fitting_kinds(task: str) -> tuple[str, ...]:
    """The kinds a class may name for this task: each kind using at least half as many
    of its words as the best (the task may be both, like "migrate the database during an
    outage"); none: only `other`."""
    scores = kind_scores(task)
    best = max(scores.values())
    found = tuple(k for k, s in scores.items() if s and 2 * s >= best)
    return found or ("other",)


def _money(task: str, found: Found) -> None:
    for m in _MONEY.finditer(task):
        raw = m.group("n1") or m.group("n2")
        value = parse_number(raw)
        unit = _CURRENCY.get((m.group("sym") or m.group("cur")).lower())
        if value is not None:
            found.add(m.span(), "budget", m.group(0), value=value, unit=unit,
                      terms=[number_text(value)])  # fmt: skip


def _people(task: str, found: Found) -> None:
    for m in _PEOPLE.finditer(task):
        raw = m.group("n") or m.group("n2") or m.group("n3")
        value = parse_number(raw.replace("a dozen", "dozen"))
        if value is not None:
            found.add(m.span(), "people", m.group(0).removeprefix("for ").strip(), value=value,
                      unit="people", terms=[number_text(value)])  # fmt: skip


def _duration(task: str, found: Found) -> None:
    for f in FRACTION.finditer(task):  # "half an hour": 0.5 hour, said as 30 minutes too
        amount = fraction_value(f)
        if amount is not None:
            found.add(f.span(), "duration", f.group(0), value=amount[0], unit=amount[1],
                      terms=duration_terms(*amount))  # fmt: skip
    for m in _DURATION.finditer(task):
        raw = m.group("n").lower()
        if raw in ("a", "an") and _RATE.search(task[: m.start()]):
            continue  # "5 applications a week": a rate, part of the count before it
        value = {"a": 1.0, "an": 1.0, "half": 0.5}.get(raw) or parse_number(raw)
        unit = m.group("unit").lower()
        if value is None:
            continue
        found.add(m.span(), "duration", m.group(0), value=value, unit=unit,
                  terms=duration_terms(value, unit))  # fmt: skip


# A duration said in the next smaller unit ("a week" is "7 days").
_SMALLER = {"week": ("day", 7), "day": ("hour", 24), "hour": ("minute", 60), "weekend": ("day", 2)}


# Units a step may name alone for one of them ("the week", "that weekend"); a bare "day"
# or "hour" is too common in a plan to mean "one day".
_NAMED_UNITS = ("week", "weekend", "month", "year", "semester", "term", "sprint", "night",
                "evening", "morning")  # fmt: skip


def duration_terms(value: float, unit: str) -> list[str]:
    """The ways a step may say a duration: "3 weeks"; "1 day", "a full day" or "a whole
    day" for one unit; a weekend, night, morning or evening by name; or the same time in
    the next smaller unit ("21 days")."""
    if unit in _NAMED_UNITS and value == 1:
        terms = [unit]
    elif value == 1:
        terms = [f"1 {unit}", f"full {unit}", f"whole {unit}", f"entire {unit}"]
    else:
        terms = [f"{number_text(value)} {unit}"]
    if unit in _SMALLER:
        smaller, factor = _SMALLER[unit]
        terms.append(f"{number_text(value * factor)} {smaller}")
    bigger = next(((u, f) for u, (v, f) in _SMALLER.items() if v == unit and u != "weekend"), None)
    if bigger is not None and value > 1 and (value / bigger[1]).is_integer():
        terms.append(f"{number_text(value / bigger[1])} {bigger[0]}")
    return terms


_QUALIFIED = re.compile(rf"\s+(?P<np>[a-z]{{3,}}(?:\s+[a-z]{{3,}})?){END}")


def _qualified(task: str, end: int) -> list[str]:
    """The noun a date or a name qualifies ("the Sunday maintenance window", "Postgres
    12"): a step saying that noun, or that version, names the same thing."""
    version = re.match(r"\s+(\d+(?:\.\d+)*)\b", task[end:])
    if version:
        return [version.group(1)]
    m = _QUALIFIED.match(task, end)
    if m is None or words(m.group("np"))[:1] in ((), *((w,) for w in words(_NOT_PLACES_TEXT))):
        return []
    return [m.group("np")] if m.group("np").split()[0] not in STOP_WORDS else []


def _dates(task: str, found: Found) -> None:
    for m in _DATE.finditer(task):
        parts = [p for p in (m.group(g) for g in ("d1", "m1", "m2", "d2", "m3", "wd")) if p]
        text = m.group("iso") or " ".join(parts)
        found.add(m.span(), "date", m.group(0), terms=[text, *_qualified(task, m.end())])
    for m in _TIME.finditer(task):
        found.add(m.span(), "time", m.group(0), terms=[m.group("t")])


def _places(task: str, found: Found) -> None:
    months = re.compile(rf"^(?:{_MONTHS}|{_WEEKDAYS})$", re.I)
    for m in _PLACE.finditer(task):
        place = m.group("place").rstrip(".'’")
        if months.match(place.split()[0]):
            continue
        # "Google Workspace" may be "Workspace" in a step; "New York" is "New York".
        last = place.split()[-1]
        terms = [place, last] if " " in place and len(last) >= 3 else [place]
        version = _qualified(task, m.end("place"))
        terms += [v for v in version if v[0].isdigit()]
        found.add(m.span("place"), "place", place, terms=terms)


def _own_places(task: str, found: Found) -> None:
    """A place named by its kind ("in our garden", "at the office", "in the city park")."""
    for m in _OWN_PLACE.finditer(task):
        noun = m.group("noun").lower()
        if noun not in _NOT_PLACES and noun not in STOP_WORDS:
            found.add(m.span("noun"), "place", m.group(0), terms=[noun])


_NAME = re.compile(
    rf"(?<=[\w,)] )(?P<name>{_CAP}(?:\s+{_CAP}){{0,2}})(?P<noun>(?:\s+[a-z]{{3,}}){{0,2}})"
)


def _names(task: str, found: Found) -> None:
    """A name the task uses past its first word ("an online Python course", "reinstall
    Windows", "the REST API"): the plan must say it too (months and weekdays are dates).
    A name that qualifies a noun ("the API signing keys") is also addressed by that noun."""
    months = re.compile(rf"^(?:{_MONTHS}|{_WEEKDAYS})$", re.I)
    for m in _NAME.finditer(task):
        name = m.group("name").rstrip(".'’")
        if months.match(name.split()[0]) or not words(name):
            continue
        nouns: list[str] = []
        for w in m.group("noun").split():
            if w.lower() in STOP_WORDS or _NOT_NOUN.match(w):
                break
            if not re.search(r"(?:ing|ed|ly)$", w):  # "signing keys": the noun is keys
                nouns.append(w)
        terms = [name.split()[-1], *nouns[-1:]]
        terms += [v for v in _qualified(task, m.end("name")) if v[0].isdigit()]
        if not m.group("noun").strip() or not nouns:
            terms += _modifier(task[: m.start("name")])
        found.add(m.span("name"), "requirement", name, terms=terms)


_MODIFIER = re.compile(r"\b(?:the|a|an|our|my|their|your|its)\s+(?P<mod>[a-z]{3,})\s+$")
# Words between an article and a name that describe it rather than name it.
_DESCRIBING_TEXT = (
    "new old online current existing latest main public private internal external local "
    "remote mobile whole entire own same other first last next big small free open"
)
_DESCRIBING = frozenset(_DESCRIBING_TEXT.split(" "))


def _modifier(before: str) -> list[str]:
    """The noun a name ending its phrase is the kind of ("the search API": search), which
    names the same thing in a step; a describing word ("the new API") names nothing."""
    m = _MODIFIER.search(before)
    if m is None:
        return []
    mod = m.group("mod")
    if mod in STOP_WORDS or mod in _DESCRIBING or re.search(r"(?:ed|ly)$", mod):
        return []
    return [mod]


_NOT_NOUN = re.compile(r"^(?:with|without|while|when|during|within|until|using)$")


def _with(task: str, found: Found) -> None:
    """What the task says to do it with, keep or use ("with new cabinets", "keeping the
    old tiles", "with a van"): the noun ending the phrase."""
    for m in _WITH.finditer(task):
        noun = m.group("noun").lower()
        if noun not in _NOT_TOPICS and noun not in STOP_WORDS:
            found.add(m.span("noun"), "deliverable", m.group(0), unit=noun, terms=[noun])


def _quantities(task: str, found: Found) -> None:
    for m in _QUANTITY.finditer(task):
        if m.group("w"):  # "two colours": a count said in words, addressed as in digits
            unit = m.group("wunit").lower()
            value = parse_number(m.group("w").replace("a dozen", "dozen"))
            # "three-course": one word, the count and its noun together.
            joined = m.group("sep") == "-"
            count = number_text(value or 0)
            terms = [f"{count} {unit}"] if joined else [count]
            if value is not None and unit not in STOP_WORDS:
                found.add(m.span(), "quantity", m.group(0), value=value, unit=unit, terms=terms)
            continue
        value = parse_number(m.group("n"))
        unit = (m.group("unit") or "").lower()
        if value is None or not found.free(*m.span("n")):
            continue
        if unit and unit not in STOP_WORDS and unit not in ("am", "pm"):
            # The number is what a step must say ("40" of "40 lessons"): the noun after it
            # may be an adjective ("3 raised beds") or said otherwise ("40 videos").
            found.add(m.span(), "quantity", m.group(0), value=value, unit=unit,
                      terms=[number_text(value), *_in_metres(value, unit)])  # fmt: skip
        else:
            found.add(m.span("n"), "number", m.group("n"), value=value,
                      terms=[number_text(value)])  # fmt: skip


_KM = frozenset(("km", "kms", "kilometre", "kilometres", "kilometer", "kilometers"))


def _in_metres(value: float, unit: str) -> list[str]:
    """A distance in km is also its metres ("5 km" is the "5k" of a run: 5000)."""
    return [number_text(value * 1000)] if unit in _KM else []


def _deliverables(task: str, found: Found) -> None:
    for m in _DELIVERABLE.finditer(task):
        noun = m.group("noun").lower()
        mods = [w for w in m.group("mods").lower().split() if w not in STOP_WORDS | _ASKING_VERBS]
        # "a vegetarian menu": a step about the menu or about it being vegetarian.
        terms = [noun, mods[-1]] if mods else [noun]
        text = " ".join([*mods[-1:], noun])
        found.add(m.span("noun"), "deliverable", text, unit=noun, terms=terms)


def _phrase(text: str, *, last: bool) -> str:
    """The clause next to an order word: the clause before it (`last`) or after it, its
    first four words (the verb and its object)."""
    parts = _CLAUSE.split(text)
    clause = (parts[-1] if last else parts[0]).strip()
    return " ".join(clause.split()[:4])


_NOT_ACTIONS = re.compile(
    r"^(?:the|a|an|they|it|we|he|she|you|i|this|that|these|those|our|my|your|their|its|"
    r"there|\d)\b",
    re.I,
)


def _an_action(phrase: str) -> bool:
    """Does the phrase say something done ("wiping the laptop", "reinstall Windows"),
    not a time or a state ("they expire on Friday", "March 3", "the end of May")?"""
    return bool(words(phrase)) and not (
        _NOT_ACTIONS.match(phrase) or _DATE.search(phrase) or re.search(r"\d", phrase)
    )


_FIRST_ACT = re.compile(
    r"^(?P<act>[^,.;]+?)(?=\s+(?:on|in|at|for|with|without|from|to|by|within|during|and|then)\b|[,.;]|$)",
    re.I,
)


def _first_act(task: str) -> str:
    """The task's opening act up to its first preposition ("Rotate the API signing keys"
    of "Rotate the API signing keys on 4 servers ...")."""
    m = _FIRST_ACT.match(task)
    return " ".join(m.group("act").split()[:6]) if m and _an_action(m.group("act")) else ""


def dependencies(task: str) -> list[Dependency]:
    """Stated orders: "A before B", "B after A", "first A, then B" (a time or a state
    after before/after is a deadline, not an order)."""
    out: list[Dependency] = []
    for m in _ORDER.finditer(task):
        left = _phrase(task[: m.start()], last=True)
        right = _phrase(task[m.end() :], last=False)
        delay = m.group("word").lower() == "after" and _DURATION.match(task, m.end())
        if _an_action(left) and delay:
            # "... and revoke the old keys after 24 hours": after the task's first act.
            opening = _first_act(task)
            if opening and not set(words(left)) <= set(words(opening)):
                out.append(Dependency(before=opening, after=left))
            continue
        if not (_an_action(left) and _an_action(right)):
            continue
        first, then = (left, right) if m.group("word").lower() == "before" else (right, left)
        out.append(Dependency(before=first, after=then))
    for m in _THEN.finditer(task):
        a, b = _phrase(m.group("a"), last=True), _phrase(m.group("b"), last=False)
        if _an_action(a) and _an_action(b):
            out.append(Dependency(before=a, after=b))
    return out[:8]


def _constraints(task: str) -> Iterator[Constraint]:
    found = Found()
    rules = (
        _money, _people, _duration, _dates, _places, _own_places, means, qualifiers,
        _quantities, topics, _deliverables, _with, _names, dish_names, acts,
    )  # fmt: skip
    for rule in rules:
        rule(task, found)
    order = sorted(range(len(found.items)), key=lambda i: found.spans[i])
    yield from (found.items[i] for i in order)


def extract_spec(task: str) -> TaskSpec:
    """The spec code reads from `task` (see the module docstring)."""
    text = " ".join(task.split())
    return TaskSpec(
        task=text,
        kind=task_kind(text),
        constraints=list(_constraints(text))[:16],
        order=dependencies(text),
        source="code",
    )
