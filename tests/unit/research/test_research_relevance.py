"""The lexical support check asks whether the answer answers the question, not only
whether its source says it (issue 16: a true sentence from the wrong article passed;
a right bare title was rejected because the description's words are not in the
summary). A `Source` brings its title and description: what the article says its
subject is."""

from __future__ import annotations

from guardsearch.core.source import Source
from guardsearch.loops.research.citations import (
    LexicalSupport,
    NoSupportCheck,
    about_question,
    lexical_support,
    source_text,
    verify_citations,
)

KIEV = "Which subject is described as: Grand Prince of Kiev from 978 to 1015?"
VLADIMIR_TEXT = (
    "Vladimir I Sviatoslavich, given the epithet the Great, was Prince of Novgorod and "
    "ruler of Kievan Rus' from 978 until his death in 1015."
)
PARIS_TEXT = "Paris is the capital and largest city of France."
TEXTS = {"[1]": VLADIMIR_TEXT, "[2]": PARIS_TEXT}
SOURCES = {
    "[1]": Source(
        id="[1]",
        title="Vladimir the Great",
        description="Grand Prince of Kiev from 978 to 1015",
        text=VLADIMIR_TEXT,
    ),
    "[2]": Source(id="[2]", title="Paris", description="Capital of France", text=PARIS_TEXT),
}


def test_a_source_says_its_title_and_description_too() -> None:
    assert source_text(PARIS_TEXT) == PARIS_TEXT
    said = source_text(SOURCES["[2]"])
    assert said.startswith("Paris. Capital of France. ") and said.endswith(PARIS_TEXT)
    assert source_text(Source(title="", text="only text")) == "only text"


def test_frame_words_neither_count_for_nor_against_a_question_or_claim() -> None:
    assert about_question(KIEV, source_text(SOURCES["[1]"])) == 1.0
    assert about_question(KIEV, PARIS_TEXT) == 0.0
    # "The subject described is" says nothing a source could back.
    assert lexical_support("The subject described is Paris", PARIS_TEXT) == 1.0


async def test_a_true_sentence_from_the_wrong_article_does_not_answer_the_question() -> None:
    answer = "Paris is the capital and largest city of France [2]."
    v = await verify_citations(answer, [], TEXTS, LexicalSupport(), question=KIEV)
    assert v.verified == () and v.off_topic == ("[2]",)
    feedback = v.feedback(["[1]", "[2]"])
    assert "not about what the question asks" in feedback
    assert "do not say" not in feedback
    # Without a question there is nothing to answer: the sentence is supported.
    alone = await verify_citations(answer, [], TEXTS, LexicalSupport())
    assert alone.verified == ("[2]",) and alone.off_topic == ()


async def test_one_source_about_the_question_is_enough() -> None:
    # (a context sentence long enough not to be read as a bare answer to the question)
    answer = (
        "Vladimir the Great was Grand Prince of Kiev [1]. "
        "Paris is the capital and largest city of France [2]."
    )
    v = await verify_citations(answer, [], SOURCES, LexicalSupport(), question=KIEV)
    assert v.verified == ("[1]", "[2]") and v.off_topic == ()


async def test_a_bare_title_is_judged_by_what_its_article_says_it_is() -> None:
    right = await verify_citations("Vladimir the Great", ["[1]"], SOURCES, LexicalSupport(),
                                   question=KIEV)  # fmt: skip
    wrong = await verify_citations("Paris", ["[2]"], SOURCES, LexicalSupport(), question=KIEV)
    assert right.verified == ("[1]",)
    assert wrong.verified == ()
    sentence = await verify_citations(
        "The subject described is Vladimir the Great [1].", [], SOURCES, LexicalSupport(),
        question=KIEV,
    )  # fmt: skip
    assert sentence.verified == ("[1]",)


async def test_other_judges_are_not_gated_by_the_lexical_relevance_check() -> None:
    answer = "Paris is the capital and largest city of France [2]."
    v = await verify_citations(answer, [], TEXTS, NoSupportCheck(), question=KIEV)
    assert v.verified == ("[2]",) and v.off_topic == ()


async def test_a_source_about_the_named_subject_is_about_the_question() -> None:
    # The summary never says "play" or "wrote"; it is about Tartuffe all the same.
    texts = {"[1]": "Tartuffe, first performed in 1664, is a theatrical comedy by Molière."}
    v = await verify_citations(
        "Molière", ["[1]"], texts, LexicalSupport(), question="Who wrote the play Tartuffe?"
    )
    assert v.verified == ("[1]",)


async def test_a_year_the_question_gives_binds_the_work_it_names() -> None:
    hugo = "What is the title of the 1831 novel by Victor Hugo?"
    les = Source(
        id="[1]",
        title="Les Misérables",
        description="1862 novel by Victor Hugo",
        text="Les Misérables is a French epic historical novel by Victor Hugo.",
    )
    hunchback = Source(
        id="[2]",
        title="The Hunchback of Notre-Dame",
        description="1831 novel by Victor Hugo",
        text="The Hunchback of Notre-Dame is a French Gothic novel by Victor Hugo.",
    )
    sources = {"[1]": les, "[2]": hunchback}
    wrong = "Les Misérables is a French epic historical novel [1]."
    v = await verify_citations(wrong, [], sources, LexicalSupport(), question=hugo)
    assert v.verified == () and v.off_topic == ("[1]",)
    short = await verify_citations(
        "Les Misérables [1]", [], sources, LexicalSupport(), question=hugo
    )
    assert short.verified == ()
    right = await verify_citations(
        "The Hunchback of Notre-Dame [2]", [], sources, LexicalSupport(), question=hugo
    )
    assert right.verified == ("[2]",)
