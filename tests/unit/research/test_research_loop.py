"""The research loop on scripted models and injected provider faults."""

from __future__ import annotations

import json
import logging

import pytest
from research_helpers import (
    ANSWER,
    INSUFFICIENT,
    PLAN,
    QUESTION,
    FakeProvider,
    SleepRecorder,
    hit,
    no_sleep,
    phases,
    research_model,
    transient,
)

from guardsearch import ResearchRun, run_research
from guardsearch.core.artifact import Artifact
from guardsearch.core.budget import Budget
from guardsearch.core.context import Context
from guardsearch.core.guard_result import GuardResult
from guardsearch.core.messages import ModelRequest
from guardsearch.core.source import Source
from guardsearch.core.steering import Steering
from guardsearch.corpus import CorpusIndex
from guardsearch.loops.research import (
    AgentResponse,
    ErrorResponse,
    ResearchConfig,
    ResearchLoop,
)
from guardsearch.loops.research.citations import LexicalSupport
from guardsearch.loops.research.phases import DEGRADED_NOTE, synthesize_step
from guardsearch.loops.research.subject import (
    asked_subject,
    described_subject,
    named_source,
    quoted_source,
)
from guardsearch.tools import CorpusProvider, ResilienceSettings

FAST = ResilienceSettings(timeout_s=0.05)


def loop_for(model, providers, config: ResearchConfig | None = None, **kw) -> ResearchLoop:  # type: ignore[no-untyped-def]
    return ResearchLoop(
        model=model,
        providers=providers,
        # The reflection machinery under test: the model's reflection decides (the
        # evidence stop and hops have tests of their own, test_research_answer_types.py).
        config=config or ResearchConfig(evidence_stop=False, hops=False),
        resilience=kw.pop("resilience", FAST),
        sleep=kw.pop("sleep", no_sleep),
        **kw,
    )


def prompts(model, title: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        "\n".join(m.content for m in r.messages)
        for r in model.requests
        if (r.json_schema or {}).get("title") == title
    ]


# -- smoke ---------------------------------------------------------------------------


async def test_run_answers_with_the_agent_response_schema(small_index: CorpusIndex) -> None:
    run = await loop_for(research_model(), [CorpusProvider(small_index)]).run(QUESTION)
    assert isinstance(run.response, AgentResponse), run.response
    payload = json.loads(run.response.model_dump_json())
    AgentResponse.model_validate(payload)
    assert payload["summary"] == payload["final_answer"]
    assert "Georges Seurat" in payload["summary"]
    assert set(payload) >= {
        "summary",
        "final_answer",
        "sources",
        "citations",
        "sufficient",
        "confidence",
        "iterations",
        "degraded_mode",
        "usage",
    }


async def test_max_iters_1_terminates_after_one_iteration(small_index: CorpusIndex) -> None:
    model = research_model(reflect=INSUFFICIENT)
    run = await loop_for(model, [CorpusProvider(small_index)]).run(QUESTION, max_iters=1)
    response = run.response
    assert isinstance(response, AgentResponse)
    assert response.iterations == 1 and run.state.iteration == 1
    assert response.insufficient_termination and response.stop_reason == "max_iterations"
    assert len(prompts(model, "ReflectionDraft")) == 1
    assert "stopped before it was complete" in prompts(model, "SynthesisDraft")[0]


async def test_empty_search_results_fall_back_to_a_plain_no_source_answer() -> None:
    model = research_model(reflect=INSUFFICIENT)
    run = await loop_for(model, [FakeProvider("empty", [[]])]).run(QUESTION, tier="simple")
    response = run.response
    assert isinstance(response, AgentResponse)
    assert response.sources == [] and "No sources were found" in response.summary
    assert response.insufficient_termination and not response.sufficient
    assert prompts(model, "SynthesisDraft") == []  # nothing to cite: no model guesswork


async def test_cited_ids_are_resolved_to_retrieved_sources_and_verified(
    small_index: CorpusIndex,
) -> None:
    answer = {
        "answer": "Georges Seurat painted it [1]. It is a pointillist work [99].",
        "citations": ["[1]", "[99]"],
    }
    run = await loop_for(research_model(synthesize=answer), [CorpusProvider(small_index)]).run(
        QUESTION
    )
    response = run.response
    assert isinstance(response, AgentResponse)
    assert [s.id for s in response.sources] == ["[1]"]
    source = response.sources[0]
    assert source.title == run.state.result("[1]").title  # type: ignore[union-attr]
    assert source.location.startswith("https://en.wikipedia.org/wiki/")
    assert source.license == "CC BY-SA 4.0" and source.attribution
    assert response.citations.verified == ["[1]"] and response.citations.hallucinated == ["[99]"]
    assert "[99]" not in response.summary
    assert [c.id for c in run.state.citations] == ["[1]"]
    assert run.synthesis is not None and run.synthesis.citations[0].id == "[1]"


# -- error handling --------------------------------------------------------------------


async def test_a_search_500_is_retried_with_backoff_inside_the_loop() -> None:
    calls = {"n": 0}

    def web(query: str):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] <= 2:
            return transient("HTTP 500 Internal Server Error")
        return [
            hit(
                "La Grande Jatte",
                "A Sunday Afternoon on the Island of La Grande Jatte "
                "was painted by Georges Seurat.",
            )
        ]

    sleep = SleepRecorder()
    run = await loop_for(
        research_model(), [FakeProvider("web", web)], resilience=ResilienceSettings(), sleep=sleep
    ).run(QUESTION)
    assert isinstance(run.response, AgentResponse)
    assert 1.0 <= sleep.waits[0] < 2.0 and 2.0 <= sleep.waits[1] < 3.0
    retries = [e for e in run.trace.of_kind("retry") if e.step == "search"]
    assert [e.data["attempt"] for e in retries] == [2, 3]
    assert [e["error"] for e in run.response.errors] == ["HTTP 500 Internal Server Error"] * 2
    assert not run.response.degraded_mode


async def test_three_empty_results_trigger_reformulation() -> None:
    painting = hit(
        "La Grande Jatte",
        "A Sunday Afternoon on the Island of La Grande Jatte was painted by Georges Seurat.",
    )
    web = FakeProvider("web", lambda q: [painting] if q == "Seurat painter" else [])
    reflect = {
        **INSUFFICIENT,
        "new_queries": [{"query": "Seurat painter", "intent": "reformulation"}],
    }
    model = research_model(reflect=[reflect, {**INSUFFICIENT, "sufficient": True}])
    run = await loop_for(model, [web]).run(QUESTION, tier="simple")
    response = run.response
    assert isinstance(response, AgentResponse), response
    first = run.state.queries_run[:3]
    assert [r.hits for r in first] == [0, 0, 0]
    assert run.state.failed_queries[:3] == tuple(r.query for r in first)
    notes = [e for e in run.trace.of_kind("note") if e.data.get("what") == "reformulate"]
    assert len(notes) >= 3  # tier 2 in code: broader variants of each empty query
    reflect_prompt = prompts(model, "ReflectionDraft")[0]
    assert "found fewer than 3 results" in reflect_prompt
    assert all(q in reflect_prompt for q in run.state.failed_queries[:3])
    assert "Seurat painter" in web.queries  # the model's reformulation was searched
    assert response.sources[0].title == "La Grande Jatte"


async def test_a_timing_out_provider_degrades_gracefully() -> None:
    painting = hit(
        "La Grande Jatte",
        "A Sunday Afternoon on the Island of La Grande Jatte was painted by Georges Seurat.",
    )
    web = FakeProvider("web", lambda q: [painting] if q == QUESTION else "hang")
    model = research_model(reflect=INSUFFICIENT)
    run = await loop_for(
        model, [web], resilience=ResilienceSettings(timeout_s=0.01, attempts=2)
    ).run(QUESTION, tier="standard")
    response = run.response
    assert isinstance(response, AgentResponse), response
    assert response.degraded_mode and response.stop_reason == "degraded"
    assert DEGRADED_NOTE in prompts(model, "SynthesisDraft")[0]
    assert DEGRADED_NOTE in response.summary
    assert [s.title for s in response.sources] == ["La Grande Jatte"]
    assert any("timed out" in e["error"] for e in response.errors)
    assert prompts(model, "ReflectionDraft") == []  # no point reflecting: search is over


async def test_every_provider_failing_still_ends_in_an_answer_that_says_so() -> None:
    run = await loop_for(research_model(), [FakeProvider("down", [transient()])]).run(
        QUESTION, tier="standard"
    )
    response = run.response
    assert isinstance(response, AgentResponse)
    assert response.degraded_mode and response.sources == []
    assert "No sources were found" in response.summary and DEGRADED_NOTE in response.summary


async def test_token_budget_exhaustion_triggers_compaction(small_index: CorpusIndex) -> None:
    topics = iter(
        [
            "Eiffel Tower",
            "Las Meninas",
            "Paris",
            "pointillism technique",
            "Seine island",
            "Prado Madrid",
            "Champ de Mars",
            "lattice tower",
        ]
    )

    def reflect(request: ModelRequest) -> dict[str, object]:
        return {**INSUFFICIENT, "new_queries": [{"query": next(topics, "x"), "intent": "more"}]}

    model = research_model(reflect=reflect)
    config = ResearchConfig(
        active_results=2,
        reflect_max_tokens=40,
        synthesize_max_tokens=60,
        evidence_stop=False,
        hops=False,
    )
    run = await loop_for(model, [CorpusProvider(small_index)], config).run(
        QUESTION, tier="deep", budget=Budget.of(tokens=2500, seconds=120)
    )
    response = run.response
    assert isinstance(response, AgentResponse), response
    compactions = [e.data for e in run.trace.of_kind("phase") if e.data["phase"] == "compact"]
    assert any("token budget below 25%" in c["reason"] for c in compactions)
    assert run.state.compacted
    assert response.stop_reason == "budget_exhausted"
    assert run.usage.total_tokens <= 2500  # the synthesis reserve was never spent on loops


async def test_a_state_over_its_size_cap_is_compacted(small_index: CorpusIndex) -> None:
    config = ResearchConfig(state_token_cap=50, active_results=1)
    run = await loop_for(
        research_model(reflect=INSUFFICIENT), [CorpusProvider(small_index)], config
    ).run(QUESTION, max_iters=2)
    reasons = [e.data["reason"] for e in run.trace.of_kind("phase") if e.data["phase"] == "compact"]
    assert any("over the 50 cap" in r for r in reasons)
    compacted = [r for r in run.state.search_results if r.id in run.state.compacted]
    assert compacted and all(len(r.text) <= 160 for r in compacted)
    assert isinstance(run.response, AgentResponse)  # citations still check the raw text


# -- error surfaces ---------------------------------------------------------------------


async def test_an_unparseable_plan_falls_back_to_the_task_as_the_query(
    small_index: CorpusIndex,
) -> None:
    # The task is the first query whatever the plan says: a plan that never parses
    # costs its attempts, not the run.
    model = research_model(plan="this is not json")
    run = await loop_for(model, [CorpusProvider(small_index)]).run(QUESTION)
    assert isinstance(run.response, AgentResponse), run.response
    assert "Seurat" in run.response.final_answer
    assert len(prompts(model, "PlanDraft")) == 3  # rmax attempts, then the fallback
    assert run.state.queries_run[0].query == QUESTION
    assert run.state.tier == "standard" and run.plan is not None and not run.plan.queries
    failed = [e.data for e in run.trace.of_kind("phase") if e.data["phase"] == "plan_failed"]
    assert len(failed) == 1
    assert "research-plan" in failed[0]["reason"] and failed[0]["attempts"] == 3
    assert failed[0]["queries"] == [QUESTION]
    assert "planned" not in phases(run.trace)
    assert run.state.error_log[0].phase == "plan"
    assert any(e["phase"] == "plan" for e in run.response.errors)


async def test_a_failed_plan_keeps_the_configured_tier(small_index: CorpusIndex) -> None:
    model = research_model(plan="this is not json")
    run = await loop_for(model, [CorpusProvider(small_index)]).run(QUESTION, tier="simple")
    assert isinstance(run.response, AgentResponse)
    assert run.state.tier == "simple" and run.state.max_iters == 2


async def test_a_plan_repeating_the_task_words_is_searched_once_without_a_retry(
    small_index: CorpusIndex,
) -> None:
    # A fact question's planner copies the quote: the same words retrieve the same, so
    # those queries are dropped by code, and the plan is not sent back.
    quote = "Georges Seurat's most famous work"
    task = f'Which subject is this about: "{quote}"?'
    plan = {
        "complexity": "simple",
        "queries": [
            {"query": quote, "intent": "the quote"},
            {"query": quote.upper(), "intent": "again"},
            {"query": f"which subject {quote} about", "intent": "the task"},
        ],
    }
    model = research_model(plan=plan)
    run = await loop_for(model, [CorpusProvider(small_index)]).run(task)
    assert len(prompts(model, "PlanDraft")) == 1
    first = next(e.data for e in run.trace.of_kind("phase") if e.data["phase"] == "search")
    # The recased quote has the quote's words, the third query the task's ("which",
    # "is", "this", "about" are stopwords to the search).
    assert first["queries"] == [task, quote]
    assert "plan_failed" not in phases(run.trace)


async def test_a_reflection_claiming_sufficiency_without_sources_is_sent_back() -> None:
    model = research_model(
        reflect=[
            {"sufficient": True, "confidence": 1.0, "gaps": [], "new_queries": []},
            INSUFFICIENT,
        ]
    )
    run = await loop_for(model, [FakeProvider("empty", [[]])]).run(QUESTION, max_iters=1)
    assert isinstance(run.response, AgentResponse)
    second = prompts(model, "ReflectionDraft")[1]
    assert "cannot be sufficient" in second


# A question that names no retrieved source by its title: its retries stay in one
# request, the verdict handed back (one that names a source gets a narrower request).
UNNAMED = "Who painted the Grande Jatte?"


async def test_a_hallucinated_citation_is_fed_back_and_fixed(small_index: CorpusIndex) -> None:
    # No retrieved source says this answer, so there is nothing to repair it with.
    bad = {"answer": "Vincent van Gogh painted it in Amsterdam [99].", "citations": ["[99]"]}
    model = research_model(synthesize=[bad, ANSWER])
    run = await loop_for(model, [CorpusProvider(small_index)]).run(UNNAMED)
    assert isinstance(run.response, AgentResponse)
    assert "[99] is not a source id" in prompts(model, "SynthesisDraft")[1]


async def test_a_right_answer_citing_no_retrieved_source_is_repaired_not_discarded(
    small_index: CorpusIndex,
) -> None:
    bad = {"answer": "Georges Seurat painted it.", "citations": ["[99]"]}
    model = research_model(synthesize=[bad])
    run = await loop_for(model, [CorpusProvider(small_index)]).run(QUESTION)
    assert isinstance(run.response, AgentResponse)
    assert len(prompts(model, "SynthesisDraft")) == 1  # repaired without a second call
    assert run.response.citations.verified and "Seurat" in run.response.final_answer
    patches = [e for e in run.trace.events if e.kind == "patch_applied"]
    assert patches and patches[0].data["passed"]
    assert patches[0].data["patch"][0]["path"] == "/citations"
    assert run.steering.repairs == 1


DESCRIBED = "Which subject is described as: Capital of France?"


async def test_an_answer_restating_a_source_description_is_repaired_to_its_subject(
    small_index: CorpusIndex,
) -> None:
    # The small model copies the description it was asked about; the source whose
    # description that is names the subject by its title, so the step repairs the draft.
    echo = {"answer": "Capital of France", "citations": ["[1]"]}
    model = research_model(synthesize=[echo])
    run = await loop_for(model, [CorpusProvider(small_index)]).run(DESCRIBED)
    assert isinstance(run.response, AgentResponse), run.response
    assert run.response.final_answer == f"Paris {run.response.sources[0].id}"
    assert len(prompts(model, "SynthesisDraft")) == 1  # repaired without a second call
    paris = next(s for s in run.response.sources if s.title == "Paris")
    assert run.response.citations.verified == [paris.id]
    assert run.steering.repairs == 1


async def test_an_answer_taking_one_word_of_a_described_subject_is_repaired_to_it(
    small_index: CorpusIndex,
) -> None:
    # "Seat of government of Bolivia?" -> "Bolivia": the answer only repeats a word of
    # the question, and the question restates one source's description.
    model = research_model(synthesize=[{"answer": "France", "citations": ["[1]"]}])
    run = await loop_for(model, [CorpusProvider(small_index)]).run(DESCRIBED)
    assert isinstance(run.response, AgentResponse), run.response
    assert run.response.final_answer == f"Paris {run.response.sources[0].id}"
    assert len(prompts(model, "SynthesisDraft")) == 1 and run.steering.repairs == 1


async def test_an_answer_describing_a_source_without_naming_it_is_given_its_subject(
    small_index: CorpusIndex,
) -> None:
    # The model writes the description of the article the quote is from, which is
    # true of it and does not name it.
    question = 'Where is this: "The island of the Seine hosts Notre-Dame."?'
    model = research_model(synthesize=[{"answer": "Capital of France.", "citations": []}])
    run = await loop_for(model, [CorpusProvider(small_index)]).run(question)
    assert isinstance(run.response, AgentResponse), run.response
    assert run.response.final_answer == f"Paris (Capital of France) {run.response.sources[0].id}"
    assert [s.title for s in run.response.sources] == ["Paris"]
    assert len(prompts(model, "SynthesisDraft")) == 1 and run.steering.repairs == 1


async def test_a_subject_question_is_answered_by_the_source_holding_its_quote(
    small_index: CorpusIndex,
) -> None:
    # Asked which subject a quoted passage is about, the small model names a category
    # that is true of the article ("Birds" for a quote from Cuckoo); the one retrieved
    # source holding the passage is the subject asked for.
    question = 'Which subject is this about: "The island of the Seine hosts Notre-Dame."?'
    model = research_model(synthesize=[{"answer": "French cities", "citations": ["[1]"]}])
    run = await loop_for(model, [CorpusProvider(small_index)]).run(question)
    assert isinstance(run.response, AgentResponse), run.response
    assert run.response.final_answer == f"Paris {run.response.sources[0].id}"
    assert [s.title for s in run.response.sources] == ["Paris"]
    assert len(prompts(model, "SynthesisDraft")) == 1 and run.steering.repairs == 1


def test_only_a_subject_question_settled_by_the_sources_names_a_subject() -> None:
    tower = Source(
        id="[1]", title="Eiffel Tower", description="Tower in Paris", text="It was built in 1889."
    )
    other = Source(id="[2]", title="Louvre", description="Museum in Paris", text="It was built.")
    both = {"[1]": tower, "[2]": other}
    quoted = 'Which subject is this about: "It was built in 1889."?'
    assert asked_subject(quoted, both) == ("[1]", "Eiffel Tower")
    assert asked_subject("Which subject is described as: Tower in Paris?", both) == (
        "[1]",
        "Eiffel Tower",
    )
    # Not a subject question: a fact about what the quote is from is asked.
    assert asked_subject('Who built it: "It was built in 1889."?', both) is None
    # Two sources hold the passage, or the question names the subject already.
    copy = Source(id="[3]", title="Paris", text="Of a tower: it was built in 1889!")
    assert asked_subject(quoted, {**both, "[3]": copy}) is None
    assert asked_subject("Which subject, the Eiffel Tower, is a Tower in Paris?", both) is None


async def synthesis_verdict(
    sources: dict[str, Source], question: str, answer: str, cite: str
) -> GuardResult:
    """The synthesis guard's verdict on `answer` citing `cite`, judged against `sources`."""
    step = synthesize_step(ResearchConfig(), sources, LexicalSupport())
    value = {"answer": answer, "citations": [cite]}
    artifact = Artifact(id=answer, step=step.name, text=json.dumps(value), value=value)
    return await step.checker.check(artifact, Context(objective=question))


async def test_a_rejected_answer_is_pointed_at_the_source_the_question_names() -> None:
    opera = Source(
        id="[1]",
        title="Don Giovanni",
        description="1787 opera by Wolfgang Amadeus Mozart",
        text="Don Giovanni is an opera in two acts with music by Wolfgang Amadeus Mozart. "
        "Its subject is a legend.",
    )
    other = Source(
        id="[2]",
        title="Giovanni Pierluigi da Palestrina",
        description="Italian Renaissance composer",
        text="Giovanni Pierluigi da Palestrina was an Italian composer.",
    )
    sources = {"[1]": opera, "[2]": other}
    question = "Who composed the opera Don Giovanni?"
    verdict = await synthesis_verdict(sources, question, "Giovanni Pierluigi da Palestrina", "[2]")
    assert not verdict.passed
    # The maker check: what the named source says after the relation, and the repair.
    said = 'says "Don Giovanni is an opera in two acts with music by Wolfgang Amadeus Mozart"'
    assert f"source [1], about what the question names, {said}" in verdict.feedback
    assert verdict.patch is not None and verdict.patch[0]["value"] == "Wolfgang Amadeus Mozart [1]"
    assert "Its subject" not in verdict.feedback  # the first sentence only
    assert (await synthesis_verdict(sources, question, "Wolfgang Amadeus Mozart", "[1]")).passed


async def test_a_short_answer_must_be_in_the_source_the_question_names() -> None:
    film = Source(
        id="[1]",
        title="The Jazz Singer",
        description="1927 film by Alan Crosland",
        text="The Jazz Singer is a 1927 American musical drama film directed by Alan Crosland.",
    )
    singer = Source(
        id="[2]",
        title="Billie Holiday",
        description="American jazz singer",
        text="Billie Holiday was an American jazz singer and songwriter.",
    )
    sources = {"[1]": film, "[2]": singer}
    question = "Who directed the film The Jazz Singer?"
    # Billie Holiday's own source says "jazz singer".
    wrong = await synthesis_verdict(sources, question, "Billie Holiday", "[2]")
    assert not wrong.passed
    # Her article says "jazz singer", never that she directed anything: the relation
    # check refuses it, and the verdict points at what the film's article says.
    assert "source [1], about what the question names, says" in wrong.feedback
    assert "directed by Alan Crosland" in wrong.feedback
    assert wrong.patch is not None and wrong.patch[0]["value"] == "Alan Crosland [1]"
    assert (await synthesis_verdict(sources, question, "Alan Crosland", "[1]")).passed
    # Another source may back the answer when the named one says it too.
    crosland = Source(
        id="[3]", title="Alan Crosland", text="Alan Crosland directed The Jazz Singer (1927)."
    )
    with_director = {**sources, "[3]": crosland}
    assert (await synthesis_verdict(with_director, question, "Alan Crosland", "[3]")).passed


async def test_a_failed_synthesis_is_asked_again_with_the_named_source_alone(
    small_index: CorpusIndex,
) -> None:
    # A guess from among all the sources fails; the narrower request shows only the
    # source the question names, fresh (the rejected draft is not shown), and its second
    # answer passes (its own retry carries the feedback on its first).
    # (A question the maker check cannot repair by itself: "Who painted Las Meninas?"
    # is answered from the named source's "painting by Diego Velázquez" at once.)
    wrong = {"answer": "1885", "citations": []}
    right = {"answer": "1656", "citations": []}
    model = research_model(synthesize=[wrong, {**wrong, "answer": "1884"}, right])
    run = await loop_for(model, [CorpusProvider(small_index)]).run("When was Las Meninas painted?")
    assert isinstance(run.response, AgentResponse), run.response
    assert "1656" in run.response.final_answer
    synth = prompts(model, "SynthesisDraft")
    assert len(synth) == 3  # the step's three attempts: one over all, two focused
    assert "Pointillism" in synth[0]
    assert all("Pointillism" not in p and "Las Meninas" in p for p in synth[1:])
    assert "1885" not in synth[1] and "1884" in synth[2]
    focused = [e for e in run.trace.events if e.data.get("phase") == "synthesize_focused"]
    assert [e.data["title"] for e in focused] == ["Las Meninas"]


async def test_a_subject_question_gets_no_focused_retry(small_index: CorpusIndex) -> None:
    wrong = {"answer": "Georges Seurat", "citations": []}
    model = research_model(synthesize=[wrong, {**wrong, "answer": "Seurat"}, wrong, wrong])
    loop = loop_for(model, [CorpusProvider(small_index)])
    run = await loop.run("Which subject is described as: painting in the Prado by Las Meninas?")
    assert len(prompts(model, "SynthesisDraft")) == 3
    assert not [e for e in run.trace.events if e.data.get("phase") == "synthesize_focused"]


def test_the_named_source_is_the_longest_title_the_question_holds() -> None:
    giovanni = Source(id="[1]", title="Don Giovanni", text="An opera.")
    don = Source(id="[2]", title="Don (river)", text="A river.")
    question = "Who composed the opera Don Giovanni?"
    assert named_source(question, {"[1]": giovanni, "[2]": don}) == (
        "[1]",
        "Don Giovanni",
        "An opera.",
    )
    assert named_source("Who wrote Hamlet?", {"[1]": giovanni}) is None
    # Named as written: a common word that is also a title does not name it.
    rabat = Source(id="[3]", title="Rabat", text="Rabat is the capital city of Morocco.")
    capital = Source(id="[4]", title="Capital (economics)", text="In economics, capital ...")
    asked = "Rabat is the capital of which country or region?"
    assert named_source(asked, {"[3]": rabat, "[4]": capital}) == (
        "[3]",
        "Rabat",
        "Rabat is the capital city of Morocco.",
    )


async def test_a_description_answers_a_question_that_names_its_subject(
    small_index: CorpusIndex,
) -> None:
    model = research_model(synthesize={"answer": "Capital of France", "citations": ["[1]"]})
    run = await loop_for(model, [CorpusProvider(small_index)]).run("What is Paris?")
    assert isinstance(run.response, AgentResponse), run.response
    assert run.response.final_answer == f"Capital of France {run.response.sources[0].id}"
    assert run.steering.repairs == 0


async def test_an_answer_repeating_the_quoted_passage_is_repaired_to_its_article(
    small_index: CorpusIndex,
) -> None:
    # Asked what a quoted sentence is about, the small model copies the sentence back;
    # the one retrieved article whose text holds it names the subject.
    question = 'Which subject is this about: "The island of the Seine hosts Notre-Dame."?'
    echo = {"answer": "The island of the Seine hosts Notre-Dame.", "citations": ["[1]"]}
    model = research_model(synthesize=[echo])
    run = await loop_for(model, [CorpusProvider(small_index)]).run(question)
    assert isinstance(run.response, AgentResponse), run.response
    assert run.response.final_answer == f"Paris {run.response.sources[0].id}"
    assert [s.title for s in run.response.sources] == ["Paris"]
    assert len(prompts(model, "SynthesisDraft")) == 1 and run.steering.repairs == 1


def test_a_quoted_passage_names_a_subject_only_when_one_source_holds_it() -> None:
    question = 'Which subject is this about: "It was built from 1887 to 1889 in Paris."?'
    tower = Source(id="[1]", title="Eiffel Tower", text="It was built from 1887 to 1889 in Paris.")
    copy = Source(
        id="[2]", title="Paris", text="Of a tower: it was built from 1887 to 1889 in Paris!"
    )
    other = Source(id="[3]", title="Louvre", text="It was built in 1190.")
    echo = {"built", "1887", "1889", "paris"}
    assert quoted_source(echo, {"[1]": tower, "[3]": other}, question) == ("[1]", "Eiffel Tower")
    assert quoted_source(echo, {"[1]": tower, "[2]": copy}, question) is None  # two hold it
    assert quoted_source({"louvre"}, {"[1]": tower}, question) is None  # not the quote's words
    assert quoted_source(echo, {"[1]": tower}, "Which subject was built 1887 to 1889?") is None


def test_no_subject_is_named_when_two_descriptions_match_equally() -> None:
    a = Source(id="[1]", title="Paris", description="Capital of France", text="")
    b = Source(id="[2]", title="Lutetia", description="Capital of France", text="")
    assert described_subject({"capital", "france"}, {"[1]": a}) == ("[1]", "Paris")
    assert described_subject({"capital", "france"}, {"[1]": a, "[2]": b}) is None
    assert described_subject({"capital"}, {"[1]": a}) is None  # half the description
    # The closest description wins: all of Karate's words, not Jujutsu's subset.
    karate = Source(id="[3]", title="Karate", description="Japanese and Okinawan martial art")
    jujutsu = Source(id="[4]", title="Jujutsu", description="Japanese martial art")
    echo = {"japanese", "okinawan", "martial", "art"}
    assert described_subject(echo, {"[3]": karate, "[4]": jujutsu}) == ("[3]", "Karate")
    # ... and the question covers both descriptions whole: the closer one is its subject.
    martial = "Which subject is described as: Japanese and Okinawan martial art?"
    assert described_subject(echo, {"[3]": karate, "[4]": jujutsu}, question=martial) == (
        "[3]",
        "Karate",
    )
    # A long answer sharing a few of a description's words does not restate it.
    benin = Source(id="[6]", title="Benin City", description="Capital city of Edo State")
    fact = {"amaravati", "state", "capital", "visakhapatnam", "largest", "city"}
    assert described_subject(fact, {"[6]": benin}) is None
    # The question must point at the same source as the answer's echo.
    acetone = Source(id="[7]", title="Acetone", description="Organic compound; simplest ketone")
    ethane = Source(id="[8]", title="Ethane", description="Organic compound (C2H6)")
    both = {"[7]": acetone, "[8]": ethane}
    asked = "Which subject is described as: Organic compound; simplest ketone?"
    assert described_subject({"organic", "compound"}, both) == ("[8]", "Ethane")
    assert described_subject({"organic", "compound"}, both, question=asked) is None
    echo = {"organic", "compound", "simplest", "ketone"}
    assert described_subject(echo, both, question=asked) == ("[7]", "Acetone")
    # Years are words of a description too.
    pm = Source(
        id="[5]", title="Mohammad Mosaddegh", description="Prime Minister of Iran from 1951 to 1953"
    )
    assert described_subject({"prime", "minister", "iran", "1951", "1953"}, {"[5]": pm}) == (
        "[5]",
        "Mohammad Mosaddegh",
    )
    assert described_subject({"capital", "france"}, {"[1]": "Paris is the capital."}) is None


async def test_an_answer_no_source_states_is_not_found_with_the_draft_kept(
    small_index: CorpusIndex,
) -> None:
    # The guards reject every draft and no retrieved source states what the model said:
    # the sources do not say. Not an error, and not a silent answer: the status says so,
    # the verdicts say why, and the model's draft is kept for the user to see.
    wrong = {"answer": "Vincent van Gogh painted it in Amsterdam [1].", "citations": ["[1]"]}
    # (The Eiffel Tower's source says when it was built, not who designed it.)
    run = await loop_for(research_model(synthesize=wrong), [CorpusProvider(small_index)]).run(
        "Who designed the Eiffel Tower?"
    )
    response = run.response
    assert isinstance(response, AgentResponse)
    assert response.status == "not_found" and response.final_answer == "The sources do not say."
    assert response.sources == [] and response.citations.verified == []
    assert response.draft == wrong["answer"]
    assert "do not say" in " ".join(response.verdicts)
    assert run.stop_reason == "not_found"


async def test_a_model_failure_becomes_a_retryable_error_response(
    small_index: CorpusIndex,
) -> None:
    from guardsearch.core.errors import ModelError

    run = await loop_for(
        research_model(plan=ModelError("connection refused")), [CorpusProvider(small_index)]
    ).run(QUESTION)
    assert isinstance(run.response, ErrorResponse)
    assert run.response.error.type == "model_error" and run.response.error.retryable


async def test_a_budget_too_small_for_planning_is_an_error_response(
    small_index: CorpusIndex,
) -> None:
    run = await loop_for(research_model(), [CorpusProvider(small_index)]).run(
        QUESTION, budget=Budget.of(tokens=20)
    )
    assert isinstance(run.response, ErrorResponse)
    assert run.response.error.type == "budget_exceeded"


async def test_an_unexpected_bug_is_an_internal_error_response(small_index: CorpusIndex) -> None:
    def explode(request: ModelRequest) -> str:
        raise RuntimeError("boom")

    run = await loop_for(research_model(plan=explode), [CorpusProvider(small_index)]).run(QUESTION)
    assert isinstance(run.response, ErrorResponse)
    assert run.response.error.type in {"model_error", "internal_error"}


async def test_an_empty_task_is_an_invalid_request(small_index: CorpusIndex) -> None:
    run = await loop_for(research_model(), [CorpusProvider(small_index)]).run("   ")
    assert isinstance(run.response, ErrorResponse)
    assert run.response.error.type == "invalid_request"


# -- loop mechanics ---------------------------------------------------------------------


async def test_the_task_itself_is_the_first_query_and_no_query_runs_twice(
    small_index: CorpusIndex,
) -> None:
    reflect = {
        **INSUFFICIENT,
        "new_queries": [
            {"query": "Georges Seurat", "intent": "again"},
            {"query": "Paris", "intent": "new"},
        ],
    }
    run = await loop_for(research_model(reflect=reflect), [CorpusProvider(small_index)]).run(
        QUESTION, max_iters=2
    )
    queries = [r.query for r in run.state.queries_run]
    assert queries[0] == QUESTION
    assert len(queries) == len({q.lower() for q in queries})
    assert "Paris" in queries


async def test_iterations_continue_until_the_reflection_is_sufficient(
    small_index: CorpusIndex,
) -> None:
    second = {**INSUFFICIENT, "new_queries": [{"query": "Las Meninas", "intent": "compare"}]}
    model = research_model(reflect=[INSUFFICIENT, second, {**INSUFFICIENT, "sufficient": True}])
    run = await loop_for(model, [CorpusProvider(small_index)]).run(QUESTION, tier="standard")
    assert isinstance(run.response, AgentResponse)
    assert run.response.iterations == 3 and run.response.stop_reason == "sufficient"
    assert not run.response.insufficient_termination
    assert len(run.reflections) == 3 and run.reflections[-1].metadata.model


async def test_the_wall_clock_limit_stops_the_loop_but_not_the_answer(
    small_index: CorpusIndex,
) -> None:
    now = {"t": 0.0}

    def clock() -> float:
        now["t"] += 1.0  # every look at the clock costs a second
        return now["t"]

    run = await loop_for(
        research_model(reflect=INSUFFICIENT), [CorpusProvider(small_index)], clock=clock
    ).run(QUESTION, tier="deep", budget=Budget.of(tokens=40_000, seconds=12))
    assert isinstance(run.response, AgentResponse)
    assert run.response.stop_reason == "deadline"
    assert run.state.iteration < 10


async def test_a_plan_that_outlasts_the_loop_time_still_gets_one_search_round(
    small_index: CorpusIndex,
) -> None:
    # A loaded CPU: the plan call alone passes the loop's seconds. Retrieval costs no
    # model call, so the answer still comes from sources, not "no sources were found".
    looks = {"n": 0}

    def clock() -> float:
        looks["n"] += 1
        return 0.0 if looks["n"] == 1 else 15.0  # past the loop's 12 s, inside the grace

    run = await loop_for(
        research_model(reflect=INSUFFICIENT), [CorpusProvider(small_index)], clock=clock
    ).run(QUESTION, budget=Budget.of(tokens=40_000, seconds=12))
    assert isinstance(run.response, AgentResponse)
    assert run.response.stop_reason == "deadline"
    assert [r.query for r in run.state.queries_run] == [QUESTION]
    assert run.response.sources and "No sources were found" not in run.response.final_answer


async def test_phases_are_events_with_the_seed_observability_fields(
    small_index: CorpusIndex, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="guardsearch.research")
    run = await loop_for(research_model(), [CorpusProvider(small_index)]).run(QUESTION)
    names = phases(run.trace)
    for earlier, later in [
        ("plan", "search"),
        ("search", "reflect"),
        ("reflect", "synthesize"),
        ("synthesize", "verify"),
    ]:
        assert names.index(earlier) < names.index(later)
    for event in run.trace.of_kind("phase"):
        assert {"iteration", "token_budget", "results"} <= set(event.data)
    logged = [
        json.loads(r.getMessage()) for r in caplog.records if r.name == "guardsearch.research"
    ]
    assert [entry["phase"] for entry in logged[:-1]] == names
    assert logged[-1]["event"] == "research_end" and logged[-1]["stop_reason"] == run.stop_reason
    assert {"iteration", "token_budget", "results"} <= set(logged[-1])
    assert all(entry["run_id"] == run.run_id for entry in logged)


async def test_every_model_call_is_budgeted_and_schema_constrained(
    small_index: CorpusIndex,
) -> None:
    model = research_model()
    run = await loop_for(model, [CorpusProvider(small_index)]).run(QUESTION)
    assert all(r.json_schema for r in model.requests)
    assert len(run.trace.of_kind("budget_reserve")) == model.calls
    schema = model.requests[0].json_schema or {}
    assert schema["properties"]["queries"]["maxItems"] == 6


async def test_run_research_takes_the_seed_limits_and_a_budget(small_index: CorpusIndex) -> None:
    run = await run_research(
        QUESTION,
        model=research_model(),
        providers=[CorpusProvider(small_index)],
        budget=Budget.of(tokens=40_000, seconds=60),
        config=ResearchConfig(max_iters=1, max_queries=2, max_sources=3),
    )
    assert isinstance(run, ResearchRun) and isinstance(run.response, AgentResponse)
    assert len(run.response.queries) == 2 and run.state.iteration == 1


async def test_the_real_corpus_puts_the_asked_about_article_first(
    wiki_index: CorpusIndex,
) -> None:
    run = await loop_for(research_model(), [CorpusProvider(wiki_index)]).run(QUESTION)
    assert isinstance(run.response, AgentResponse)
    assert run.response.sources[0].title == "A Sunday Afternoon on the Island of La Grande Jatte"
    assert run.response.sources[0].type == "wikipedia"


async def test_plan_prompt_is_short_and_starts_with_the_pinned_objective(
    small_index: CorpusIndex,
) -> None:
    model = research_model(plan=PLAN)
    await loop_for(model, [CorpusProvider(small_index)]).run(QUESTION)
    first = model.requests[0].messages[0].content
    assert first.startswith(f"Primary objective: {QUESTION}")
    assert sum(len(m.content) for m in model.requests[0].messages) < 1200


async def test_an_answer_that_only_repeats_the_question_is_sent_back(
    small_index: CorpusIndex,
) -> None:
    echo = {"answer": "The Grande Jatte [1].", "citations": ["[1]"]}
    model = research_model(synthesize=[echo, ANSWER])
    run = await loop_for(model, [CorpusProvider(small_index)]).run(UNNAMED)
    assert isinstance(run.response, AgentResponse)
    assert "only repeats the question" in prompts(model, "SynthesisDraft")[1]


async def test_echoed_placeholders_are_not_queries_or_gaps(small_index: CorpusIndex) -> None:
    plan = {**PLAN, "queries": [*PLAN["queries"], {"query": "<title> author", "intent": "x"}]}
    reflect = {
        "sufficient": True,
        "confidence": 0.5,
        "gaps": ["..."],
        "new_queries": [{"query": "...", "intent": "..."}],
    }
    run = await loop_for(
        research_model(plan=plan, reflect=reflect), [CorpusProvider(small_index)]
    ).run(QUESTION, tier="standard")
    assert isinstance(run.response, AgentResponse)
    assert run.response.gaps == []
    assert all("<" not in q for q in run.response.queries)


async def test_a_research_run_is_an_outcome_serialised_like_every_family(
    small_index: CorpusIndex,
) -> None:
    run = await loop_for(research_model(), [CorpusProvider(small_index)]).run(
        QUESTION, run_id="r-1"
    )
    assert isinstance(run.response, AgentResponse)
    assert run.succeeded and run.stop_reason == run.response.stop_reason == "sufficient"
    data = run.as_dict()
    assert list(data)[:5] == ["succeeded", "stop_reason", "run_id", "usage", "seconds"]
    assert data["run_id"] == run.response.run_id == "r-1"
    assert data["usage"] == run.usage.as_dict() and data["usage"]["calls"] == run.usage.calls
    assert data["iterations"] == run.state.iteration
    assert data["response"]["final_answer"] == run.response.final_answer
    json.dumps(data)


async def test_an_error_run_takes_the_kernels_stop_reason(small_index: CorpusIndex) -> None:
    run = await loop_for(research_model(), [CorpusProvider(small_index)]).run(
        QUESTION, budget=Budget.of(tokens=20)
    )
    assert not run.succeeded and run.stop_reason == "budget_exhausted"
    assert run.as_dict()["response"]["error"]["type"] == "budget_exceeded"
    invalid = await loop_for(research_model(), [CorpusProvider(small_index)]).run("  ")
    assert invalid.stop_reason == "invalid_request" and not invalid.succeeded


async def test_the_run_trace_counts_the_synthesis_outputs(small_index: CorpusIndex) -> None:
    # research_eval's repeat share reads these counts from run.trace.
    run = await loop_for(research_model(), [CorpusProvider(small_index)]).run(QUESTION)
    steering = Steering.from_events(run.trace.events, step="research-synthesize")
    assert steering.outputs >= 1
