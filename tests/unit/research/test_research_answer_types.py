"""Research answers of every type: a year, a number, a name, yes/no; two hops; "the
sources do not say"; and an unverified answer kept, never turned into an error.

The sources are shaped like the embedded corpus's summaries (title, description,
text); the model is scripted per phase, so each test states what the loop does with
a given draft.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from research_helpers import FakeProvider, no_sleep, research_model

from guardsearch.core.source import Source
from guardsearch.loops.research import AgentResponse, ResearchConfig, ResearchLoop
from guardsearch.loops.research.citations import LexicalSupport, verify_citations
from guardsearch.loops.research.evidence import (
    answer_clauses,
    answer_kind,
    bridges,
    find_answer,
    named_entities,
    other_end,
    readable,
)
from guardsearch.tools.resilient import ResilienceSettings

HIMMLER = Source(
    title="Heinrich Himmler",
    description="German Nazi leader (1900–1945)",
    text="Heinrich Luitpold Himmler was Reichsführer of the Schutzstaffel, a leading member "
    "of the Nazi Party of Germany.",
    location="https://en.wikipedia.org/wiki/Heinrich_Himmler",
    kind="wikipedia",
)
PSYCHO = Source(
    title="Psycho (1960 film)",
    description="1960 film by Alfred Hitchcock",
    text="Psycho is a 1960 American horror film produced and directed by Alfred Hitchcock.",
    location="https://en.wikipedia.org/wiki/Psycho_(1960_film)",
    kind="wikipedia",
)
HITCHCOCK = Source(
    title="Alfred Hitchcock",
    description="English filmmaker (1899–1980)",
    text="Sir Alfred Joseph Hitchcock was an English filmmaker, widely regarded as one of the "
    "most influential figures in the history of cinema.",
    location="https://en.wikipedia.org/wiki/Alfred_Hitchcock",
    kind="wikipedia",
)
NANTES = Source(
    title="Nantes",
    description="City in Pays de la Loire, France",
    text="Nantes is a city in Loire-Atlantique on the Loire. The city has a population of "
    "327,734, while its metropolitan area has nearly 1 million inhabitants. It was founded "
    "in 70 BC.",
    location="https://en.wikipedia.org/wiki/Nantes",
    kind="wikipedia",
)
FAST = ResilienceSettings(timeout_s=1.0, reformulate_empty=False)
SIMPLE = {
    "complexity": "simple",
    "queries": [{"query": "placeholder words", "intent": "x"}] * 3,
}


def numbered(*sources: Source) -> dict[str, Source]:
    return {f"[{i}]": Source(**{**s.as_dict(), "id": f"[{i}]"}) for i, s in enumerate(sources, 1)}


def provider(by_query: dict[str, list[Source]]) -> FakeProvider:
    """Hits for a query: the sources whose title words it holds."""

    def hits(query: str) -> list[Source]:
        for key, found in by_query.items():
            if key.lower() in query.lower():
                return found
        return []

    return FakeProvider("fake", hits)


def loop(model, search: FakeProvider) -> ResearchLoop:  # type: ignore[no-untyped-def]
    return ResearchLoop(
        model=model,
        providers=[search],
        config=ResearchConfig(tier="simple"),
        resilience=FAST,
        sleep=no_sleep,
    )


# -- the evidence mechanism ------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("In what year did Heinrich Himmler die?", "year"),
        ("When was Toyota founded?", "year"),
        ("How many people live in Nantes?", "number"),
        ("How tall is the Eiffel Tower?", "number"),
        ("How old was Mozart when he died?", "number"),
        ("Who directed Psycho?", "person"),
        ("Where is Antalya?", "place"),
        ("Which country is Basra in?", "place"),
        ("Was Heinrich Himmler born before Alfred Hitchcock?", "yesno"),
        ("Name two countries that border Rwanda.", "list"),
        ("What is Meningitis?", "definition"),
        ("What is the title of the 1831 novel by Victor Hugo?", "entity"),
    ],
)
def test_the_kind_of_answer_comes_from_the_question_form(question: str, kind: str) -> None:
    assert answer_kind(question) == kind


def test_a_lifespan_reads_as_born_and_died() -> None:
    assert readable("German Nazi leader (1900–1945)", description=True) == (
        "German Nazi leader (born 1900; died 1945)"
    )
    assert readable("Heinrich Himmler (1900–1945) was a Nazi leader.") == (
        "Heinrich Himmler (born 1900; died 1945) was a Nazi leader."
    )
    # A span after a thing in a text is no one's life.
    text = "a calligrapher from the Jin dynasty (266–420) known for his calligraphy"
    assert readable(text) == text


def test_a_year_answers_the_relation_its_clause_states() -> None:
    died = find_answer("1945", "In what year did Heinrich Himmler die?", HIMMLER)
    born = find_answer("1945", "In what year was Heinrich Himmler born?", HIMMLER)
    assert died is not None and died.related and died.clause.startswith("died 1945")
    assert born is not None and not born.related


def test_a_number_answers_when_its_clause_carries_the_relation_by_any_word_of_its_family() -> None:
    found = find_answer("327,734", "How many people live in Nantes?", NANTES)
    assert found is not None and found.related  # "population" answers "how many ... live"
    # "1 million inhabitants" is a number of the same family, but not 327,734.
    assert find_answer("2 million", "How many people live in Nantes?", NANTES) is None


async def test_the_support_check_verifies_a_bare_year_and_refuses_the_wrong_one() -> None:
    sources = numbered(HIMMLER)
    judge = LexicalSupport()
    died = await verify_citations(
        "1945", ["[1]"], sources, judge, question="In what year did Heinrich Himmler die?"
    )
    born = await verify_citations(
        "1945", ["[1]"], sources, judge, question="In what year was Heinrich Himmler born?"
    )
    assert died.verified == ("[1]",)
    assert born.verified == ()


async def test_a_second_hop_source_named_by_the_subject_source_verifies() -> None:
    sources = numbered(PSYCHO, HITCHCOCK)
    question = "In what year was the director of the film Psycho born?"
    assert bridges(question, sources) == {"[2]": "[1]"}
    assert "Alfred Hitchcock" in named_entities(sources["[1]"], question)
    judge = LexicalSupport()
    right = await verify_citations("1899", ["[2]"], sources, judge, question=question)
    film_year = await verify_citations("1960", ["[1]"], sources, judge, question=question)
    assert right.verified == ("[2]",)
    assert film_year.verified == ()  # the film's own year is not its director's birth year


def test_answer_clauses_need_every_relation_in_the_subjects_own_source() -> None:
    question = "In what year was the director of the film Psycho born?"
    assert answer_clauses(question, numbered(PSYCHO)) == []  # a hop is needed
    assert [i for i, _ in answer_clauses(question, numbered(PSYCHO, HITCHCOCK))] == ["[2]"]


# -- the loop ----------------------------------------------------------------------------


async def test_a_year_drafted_alone_is_verified_with_its_marker() -> None:
    # "In what year did Heinrich Himmler die?" -> "1945" was refused for having "no
    # words"; a year is the whole answer to a year question.
    model = research_model(plan=SIMPLE, synthesize={"answer": "1945", "citations": ["[1]"]})
    run = await loop(model, provider({"himmler": [HIMMLER]})).run(
        "In what year did Heinrich Himmler die?"
    )
    response = run.response
    assert isinstance(response, AgentResponse), response
    assert response.status == "verified" and response.final_answer == "1945 [1]"
    assert [s.title for s in response.sources] == ["Heinrich Himmler"]
    # The source states it: code ended the search, no reflection call was paid.
    assert run.usage.calls == 2


async def test_a_wrong_year_is_sent_back_naming_the_clause_it_misread() -> None:
    model = research_model(
        plan=SIMPLE,
        synthesize=[
            {"answer": "1945", "citations": ["[1]"]},
            {"answer": "1900", "citations": ["[1]"]},
        ],
    )
    run = await loop(model, provider({"himmler": [HIMMLER]})).run(
        "In what year was Heinrich Himmler born?"
    )
    assert isinstance(run.response, AgentResponse)
    assert run.response.status == "verified" and run.response.final_answer == "1900 [1]"
    # The verdict names the clause the year was read from and what the question asks
    # (the retry is the narrower request over the source the question names).
    verdicts = " ".join(str(e.data.get("feedback", "")) for e in run.trace.of_kind("guard_verdict"))
    assert "'1945' only in" in verdicts and "does not say born" in verdicts


async def test_two_hops_search_the_name_the_first_source_gives() -> None:
    model = research_model(
        plan=SIMPLE,
        synthesize={"answer": "Alfred Hitchcock was born in 1899.", "citations": ["[2]"]},
    )
    search = provider({"alfred hitchcock": [HITCHCOCK], "psycho": [PSYCHO]})
    run = await loop(model, search).run("In what year was the director of the film Psycho born?")
    response = run.response
    assert isinstance(response, AgentResponse), response
    assert "Alfred Hitchcock" in response.queries  # the hop: a name the film's source gave
    assert response.status == "verified" and "1899" in response.final_answer
    assert [s.title for s in response.sources] == ["Alfred Hitchcock"]


async def test_a_subject_no_source_is_about_is_not_found_without_a_model_guess() -> None:
    model = research_model(plan=SIMPLE, synthesize=AssertionError("no synthesis call"))
    run = await loop(model, provider({"": [NANTES]})).run("In what year was Greta Okonkwe born?")
    response = run.response
    assert isinstance(response, AgentResponse)
    assert response.status == "not_found" and response.final_answer == "The sources do not say."
    assert response.sources == []


async def test_an_answer_the_guard_cannot_confirm_is_returned_unverified_with_its_verdicts() -> (
    None
):
    # The source holds the name, but the question's relation ("founded") is worded in
    # no clause with it: the guard cannot confirm, and the user keeps the answer.
    toyota = Source(
        title="Toyota",
        description="Japanese automotive manufacturer",
        text="Toyota Motor Corporation is a Japanese multinational automotive manufacturer. "
        "Kiichiro Toyoda led the company for years.",
        location="https://en.wikipedia.org/wiki/Toyota",
        kind="wikipedia",
    )
    model = research_model(
        plan=SIMPLE, synthesize={"answer": "Kiichiro Toyoda", "citations": ["[1]"]}
    )
    run = await loop(model, provider({"toyota": [toyota]})).run("Who founded Toyota?")
    response = run.response
    assert isinstance(response, AgentResponse), response
    assert response.status == "unverified"
    assert response.final_answer == "Kiichiro Toyoda [1]"
    assert response.verdicts and [s.title for s in response.sources] == ["Toyota"]
    assert response.citations.verified == []


def test_the_cli_exit_code_says_the_status(tmp_path: Path) -> None:
    from guardsearch.cli.research import STATUS_EXIT

    assert STATUS_EXIT == {"verified": 0, "unverified": 3, "not_found": 4}


def synthesis_prompts(model) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        "\n".join(m.content for m in r.messages)
        for r in model.requests
        if (r.json_schema or {}).get("title") == "SynthesisDraft"
    ]


async def test_the_two_retrieved_facts_decide_a_comparison_and_are_cited() -> None:
    # The model's "Yes" is wrong (Hitchcock, 1899, is the elder): the two facts the
    # sources state decide it, and the answer cites both, in one synthesis call.
    question = "Was Heinrich Himmler born before Alfred Hitchcock?"
    model = research_model(plan=SIMPLE, synthesize=[{"answer": "Yes", "citations": ["[1]"]}])
    search = provider({"himmler": [HIMMLER, HITCHCOCK]})
    response = (await loop(model, search).run(question)).response
    assert isinstance(response, AgentResponse), response
    assert response.status == "verified"
    assert response.final_answer == (
        "No: Heinrich Himmler was born in 1900 [1]; Alfred Hitchcock was born in 1899 [2]."
    )
    assert sorted(response.citations.verified) == ["[1]", "[2]"]
    assert len(synthesis_prompts(model)) == 1


async def test_a_comparison_of_two_relations_reads_each_side_its_own() -> None:
    # "Did A die before B was born?": A's death year against B's birth year.
    question = "Did Heinrich Himmler die before Alfred Hitchcock was born?"
    model = research_model(plan=SIMPLE, synthesize=[{"answer": "Yes", "citations": ["[1]"]}])
    search = provider({"himmler": [HIMMLER, HITCHCOCK]})
    response = (await loop(model, search).run(question)).response
    assert isinstance(response, AgentResponse), response
    assert response.final_answer == (
        "No: Heinrich Himmler died in 1945 [1]; Alfred Hitchcock was born in 1899 [2]."
    )


async def test_a_side_not_retrieved_is_searched_by_its_name() -> None:
    question = "Was Heinrich Himmler older than Alfred Hitchcock?"
    model = research_model(plan=SIMPLE, synthesize=[{"answer": "No", "citations": ["[1]"]}])
    search = provider({"himmler": [HIMMLER], "hitchcock": [HITCHCOCK]})
    run = await loop(model, search).run(question)
    assert "Alfred Hitchcock" in [q.query for q in run.state.queries_run]
    assert run.response.final_answer.startswith("No: Heinrich Himmler was born in 1900 [1]")


async def test_without_both_facts_a_bare_yes_no_is_asked_for_them_and_its_numbers_decide() -> None:
    # Hitchcock's article is not retrieved: the model is asked for the two facts, and
    # the numbers its answer states decide its yes or no.
    question = "Was Heinrich Himmler born before Alfred Hitchcock?"
    stated = "Heinrich Himmler was born in 1900 [1] and Alfred Hitchcock was born in 1899 [1]."
    model = research_model(
        plan=SIMPLE,
        synthesize=[
            {"answer": "Yes", "citations": ["[1]"]},
            {"answer": f"Yes. {stated}", "citations": ["[1]"]},
            {"answer": f"No. {stated}", "citations": ["[1]"]},
        ],
    )
    search = provider({"himmler": [HIMMLER]})
    await loop(model, search).run(question)
    retries = synthesis_prompts(model)
    assert "the two facts that decide it" in retries[1]
    assert "the numbers in your answer say No" in retries[2]


async def test_a_bare_yes_the_guards_cannot_confirm_is_unverified_not_not_found() -> None:
    # Only one side's article is found: nothing decides it, and the yes/no stays the user's.
    model = research_model(plan=SIMPLE, synthesize={"answer": "Yes", "citations": ["[1]"]})
    search = provider({"himmler": [HIMMLER]})
    run = await loop(model, search).run("Was Heinrich Himmler born before Alfred Hitchcock?")
    assert isinstance(run.response, AgentResponse)
    assert run.response.status == "unverified" and run.response.final_answer.startswith("Yes")


RIO = Source(
    title="Rio de Janeiro",
    description="City in Brazil",
    text="Rio de Janeiro is the second-most-populous city in Brazil after São Paulo with a "
    "population of 13 million people as of 2025. It was founded in 1565 by the Portuguese.",
    location="https://en.wikipedia.org/wiki/Rio_de_Janeiro",
    kind="wikipedia",
)
SAIGON = Source(
    title="Ho Chi Minh City",
    description="Largest city in Vietnam",
    text="Ho Chi Minh City is the largest city in Vietnam, with a population of 14 million.",
    location="https://en.wikipedia.org/wiki/Ho_Chi_Minh_City",
    kind="wikipedia",
)
VIETNAM = Source(
    title="Vietnam",
    description="Country in Southeast Asia",
    text="Vietnam is a country in Southeast Asia. With an area of about 331,000 square "
    "kilometres, it is the 16th-most populous country. Its capital is Hanoi.",
    location="https://en.wikipedia.org/wiki/Vietnam",
    kind="wikipedia",
)


@pytest.mark.parametrize(
    ("question", "sources", "draft"),
    [
        # The question's own year is not the clause's: another fact, not an answer.
        ("What was the population of Rio de Janeiro in the year 1500?", [RIO],
         "13 million [1]"),
        # Vietnam's area is not its largest city's: a one-hop question takes no hop.
        ("What is the area of Ho Chi Minh City in square kilometres?", [SAIGON, VIETNAM],
         "331,000 [2]"),
    ],
)  # fmt: skip
async def test_a_number_stated_for_another_fact_is_not_found_not_a_guess(
    question: str, sources: list[Source], draft: str
) -> None:
    model = research_model(
        plan=SIMPLE, synthesize=[{"answer": draft, "citations": [draft.split()[-1]]}] * 3
    )
    response = (await loop(model, provider({"": sources})).run(question)).response
    assert isinstance(response, AgentResponse), response
    assert response.status == "not_found", response
    assert response.final_answer == "The sources do not say."


async def test_a_country_the_question_asks_through_is_a_second_hop() -> None:
    question = "What is the capital of the country where Ho Chi Minh City is?"
    sources = numbered(SAIGON, VIETNAM)
    check = await verify_citations(
        "Hanoi [2]", ["[2]"], sources, LexicalSupport(), question=question
    )
    assert check.verified == ("[2]",)
    one_hop = "What is the area of Ho Chi Minh City in square kilometres?"
    check = await verify_citations(
        "331,000 [2]", ["[2]"], sources, LexicalSupport(), question=one_hop
    )
    assert check.verified == ()


def test_a_measure_asks_for_a_number() -> None:
    assert answer_kind("What is the average annual rainfall of Basra?") == "number"
    assert answer_kind("What is the elevation of Lhasa?") == "number"


def test_a_year_that_ends_one_span_and_starts_the_next_starts_a_reign() -> None:
    menelik = Source(
        title="Menelik II",
        description="Emperor of Ethiopia",
        text="Menelik II was king of Shewa from 1866 to 1889 and Emperor of Ethiopia from "
        "1889 to his death in 1913.",
    )
    question = "In what year did Menelik II become Emperor of Ethiopia?"
    assert find_answer("1889", question, menelik) is not None
    assert find_answer("1913", question, menelik) is None


FLEMING = Source(
    title="Alexander Fleming",
    description="Scottish physician and microbiologist (1881–1955)",
    text="Sir Alexander Fleming was a Scottish physician and microbiologist. He shared the "
    '1945 Nobel Prize in Physiology or Medicine with Howard Florey and Ernst Chain "for the '
    'discovery of penicillin and its curative effect in various infectious diseases".',
)
PENICILLIN = Source(
    title="Penicillin",
    description="Group of antibiotics",
    text="Penicillins are a group of beta-lactam antibiotics used to treat infections.",
)
GATES = Source(
    title="Bill Gates",
    description="American businessman (born 1955)",
    text="William Henry Gates III is an American businessman. He co-founded the software "
    "company Microsoft with his childhood friend Paul Allen in 1975.",
    location="https://en.wikipedia.org/wiki/Bill_Gates",
)
MICROSOFT = Source(
    title="Microsoft",
    description="American multinational technology corporation",
    text="Microsoft Corporation is an American multinational technology conglomerate "
    "headquartered in Redmond, Washington.",
    location="https://en.wikipedia.org/wiki/Microsoft",
)


@pytest.mark.parametrize(
    ("question", "sources", "answer"),
    [
        ("Who discovered penicillin?", (PENICILLIN, FLEMING), "Alexander Fleming [2]"),
        ("Who founded Microsoft?", (MICROSOFT, GATES), "Bill Gates [2]"),
    ],
)
async def test_the_answers_own_article_stating_the_relation_verifies_it(
    question: str, sources: tuple[Source, ...], answer: str
) -> None:
    # The subject's own summary does not name them; their article says what they did.
    check = await verify_citations(answer, ["[2]"], numbered(*sources), LexicalSupport(),
                                   question=question)  # fmt: skip
    assert check.verified == ("[2]",)
    wrong = await verify_citations("Louis Pasteur [2]", ["[2]"], numbered(*sources),
                                   LexicalSupport(), question=question)  # fmt: skip
    assert wrong.verified == ()


async def test_a_founder_named_only_by_their_own_article_is_verified_by_the_loop() -> None:
    model = research_model(
        plan=SIMPLE, synthesize={"answer": "Bill Gates [2]", "citations": ["[2]"]}
    )
    run = await loop(model, provider({"": [MICROSOFT, GATES]})).run("Who founded Microsoft?")
    response = run.response
    assert isinstance(response, AgentResponse), response
    assert response.status == "verified", response
    assert response.final_answer == "Bill Gates [2]"


async def test_an_irregular_past_states_its_verb() -> None:
    titanic = Source(
        title="Sinking of the Titanic",
        description="1912 maritime disaster",
        text="RMS Titanic sank in the early morning hours of 15 April 1912 in the North "
        "Atlantic Ocean. The ship had a collision with an iceberg.",
    )
    question = "Where did the Titanic sink?"
    check = await verify_citations("North Atlantic Ocean [1]", ["[1]"], numbered(titanic),
                                   LexicalSupport(), question=question)  # fmt: skip
    assert check.verified == ("[1]",)


async def test_a_sentence_s_year_must_be_the_asked_one() -> None:
    ulysses = Source(
        title="Ulysses (novel)",
        description="1922 novel by James Joyce",
        text="Ulysses is a modernist novel by the Irish writer James Joyce.",
    )
    question = "When was the author of Ulysses born?"
    published = Source(
        title="Ulysses (novel)",
        description="1922 novel by James Joyce",
        text="The entire work was published in Paris by Sylvia Beach on 2 February 1922, "
        "Joyce's fortieth birthday.",
    )
    # A birthday's year is not a birth year.
    check = await verify_citations(
        "1922 [1]", ["[1]"], numbered(published), LexicalSupport(), question=question
    )
    assert check.verified == ()
    sentence = "Ulysses (novel) (1922 novel by James Joyce) [1]"
    check = await verify_citations(
        sentence, ["[1]"], numbered(ulysses), LexicalSupport(), question=question
    )
    assert check.verified == ()
    check = await verify_citations(
        "Heinrich Himmler died in 1945 [1]",
        ["[1]"],
        numbered(HIMMLER),
        LexicalSupport(),
        question="In what year did Heinrich Himmler die?",
    )
    assert check.verified == ("[1]",)


async def test_a_question_of_no_relation_takes_the_source_another_names() -> None:
    iran = Source(title="Iran", description="Country in West Asia",
                  text="The Shah of Iran from 1941 to 1979 was Mohammad Reza Pahlavi.")  # fmt: skip
    shah = Source(title="Mohammad Reza Pahlavi", description="Shah of Iran from 1941 to 1979",
                  text="Mohammad Reza Pahlavi was the last monarch of Iran.")  # fmt: skip
    question = "Which subject is described as: Shah of Iran from 1941 to 1979?"
    sources = numbered(iran, shah)
    assert bridges(question, sources) == {"[2]": "[1]"}
    check = await verify_citations(
        "Mohammad Reza Pahlavi [2]", ["[2]"], sources, LexicalSupport(), question=question
    )
    assert check.verified == ("[2]",)


async def test_a_description_question_takes_the_source_another_names() -> None:
    marx = Source(
        title="Karl Marx",
        description="German philosopher and socialist (1818–1883)",
        text="Karl Marx was a German philosopher. He worked with Friedrich Engels.",
    )
    engels = Source(title="Friedrich Engels",
                    description="German philosopher and socialist (1820–1895)",
                    text="Friedrich Engels was a German philosopher and businessman.")  # fmt: skip
    question = "Which subject is described as: German philosopher and socialist (1820–1895)?"
    sources = numbered(marx, engels)
    assert bridges(question, sources) == {"[2]": "[1]"}
    check = await verify_citations(
        "Friedrich Engels [2]", ["[2]"], sources, LexicalSupport(), question=question
    )
    assert check.verified == ("[2]",)


WU_ZETIAN = Source(
    title="Wu Zetian",
    description="Empress of China from 690 to 705",
    text="Wu Zetian was the only undisputed female sovereign in the history of China. She "
    "was the sole ruler of the self-styled Zhou dynasty from 690 to 705.",
)


@pytest.mark.parametrize(
    ("question", "source", "drafted", "repaired"),
    [
        ("In what year did Wu Zetian become Empress of China?", WU_ZETIAN, "705", "690 [1]"),
        ("When did Wu Zetian's reign end?", WU_ZETIAN, "690", "705 [1]"),
        (
            "In what year did Menelik II become Emperor of Ethiopia?",
            Source(
                title="Menelik II",
                description="Emperor of Ethiopia",
                text="Menelik II was king of Shewa from 1866 to 1889 and Emperor of Ethiopia "
                "from 1889 to his death in 1913.",
            ),
            "1913",
            "1889 [1]",
        ),
    ],
)
async def test_the_wrong_end_of_a_span_is_repaired_to_the_asked_end(
    question: str, source: Source, drafted: str, repaired: str
) -> None:
    model = research_model(plan=SIMPLE, synthesize=[{"answer": drafted, "citations": ["[1]"]}])
    run = await loop(model, provider({"": [source]})).run(question)
    assert isinstance(run.response, AgentResponse)
    assert run.response.status == "verified" and run.response.final_answer == repaired
    verdicts = " ".join(str(e.data.get("feedback", "")) for e in run.trace.of_kind("guard_verdict"))
    assert "the span's other end" in verdicts


def test_a_span_s_other_end_comes_only_from_the_subject_s_own_article() -> None:
    western = Source(
        title="Western Front (World War II)",
        description="Theatre of war in Europe",
        text="The Western Front was a military theatre of World War II. The Western Front's "
        "1944–1945 phase was deemed the European Theater.",
    )
    question = "When did World War II begin?"
    assert other_end("1945", question, numbered(western)) is None
    # A question that asks no start or end takes no end of a span.
    assert other_end("705", "In what year did Wu Zetian rule China?", numbered(WU_ZETIAN)) is None
    assert other_end("705", "When did Wu Zetian become Empress?", numbered(WU_ZETIAN)) == (
        "[1]",
        "690",
        "Wu Zetian (Empress of China from 690 to 705).",
    )
