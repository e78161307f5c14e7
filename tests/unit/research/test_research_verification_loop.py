"""The loop's support check follows `--support`; unsupported claims never stay in the
answer as if verified; every retry, reformulation, fallback and breaker trip is an
entry in the response's `errors`."""

from __future__ import annotations

from research_helpers import (
    ANSWER,
    INSUFFICIENT,
    QUESTION,
    FakeProvider,
    hit,
    no_sleep,
    research_model,
    transient,
)

from guardsearch.corpus import CorpusIndex
from guardsearch.loops.research import AgentResponse, ErrorResponse, ResearchConfig, ResearchLoop
from guardsearch.models.scripted import ScriptedModel
from guardsearch.tools import CorpusProvider, ResilienceSettings

FAST = ResilienceSettings(timeout_s=0.5, backoff_base_s=0.0, max_wait_s=0.0)
# True nowhere in the sources: the lexical check rejects it.
VAN_GOGH = {"answer": "Vincent van Gogh painted it in Amsterdam [1].", "citations": ["[1]"]}


def loop_for(model: ScriptedModel, providers: list, **config: object) -> ResearchLoop:  # type: ignore[type-arg]
    return ResearchLoop(
        model=model,
        providers=providers,
        config=ResearchConfig(**{"evidence_stop": False, "hops": False, **config}),  # type: ignore[arg-type]
        resilience=FAST,
        sleep=no_sleep,
    )


def support_calls(model: ScriptedModel) -> int:
    return sum((r.json_schema or {}).get("title") == "SupportVerdict" for r in model.requests)


# -- 1. the synthesis guard uses the configured judge ------------------------------------


async def test_support_off_runs_no_support_check(small_index: CorpusIndex) -> None:
    model = research_model(synthesize=VAN_GOGH)
    run = await loop_for(model, [CorpusProvider(small_index)], support="off").run(QUESTION)
    response = run.response
    assert isinstance(response, AgentResponse), response
    assert response.citations.method == "off" and response.citations.verified == ["[1]"]
    assert response.final_answer == VAN_GOGH["answer"]
    assert support_calls(model) == 0


async def test_support_off_still_rejects_ids_that_do_not_exist(small_index: CorpusIndex) -> None:
    bad = {"answer": "Vincent van Gogh painted it [42].", "citations": ["[42]"]}
    run = await loop_for(
        research_model(synthesize=bad), [CorpusProvider(small_index)], support="off"
    ).run(QUESTION)
    # Never verified; and since no source states what it says, the sources do not say.
    assert isinstance(run.response, AgentResponse)
    assert run.response.status == "not_found" and run.response.citations.verified == []
    assert "[42] is not a source id" in " ".join(run.response.verdicts)


async def test_support_model_lets_the_model_vote_in_the_guard(
    small_index: CorpusIndex,
) -> None:
    model = research_model(synthesize=ANSWER, support='{"supported": true}')
    run = await loop_for(model, [CorpusProvider(small_index)], support="model").run(QUESTION)
    response = run.response
    assert isinstance(response, AgentResponse), response
    assert response.citations.method == "model" and response.citations.verified == ["[1]"]
    # one verdict per claim/source pair: the final verification reuses the guard's
    assert support_calls(model) == 1


async def test_support_model_cannot_pass_what_the_sources_do_not_say(
    small_index: CorpusIndex,
) -> None:
    # The model says yes to everything; the lexical check comes first and says no.
    model = research_model(synthesize=VAN_GOGH, support='{"supported": true}')
    # (The Eiffel Tower's source says when it was built, not who designed it.)
    run = await loop_for(model, [CorpusProvider(small_index)], support="model").run(
        "Who designed the Eiffel Tower?"
    )
    assert isinstance(run.response, AgentResponse)
    assert run.response.status == "not_found" and run.response.citations.verified == []
    assert support_calls(model) == 0


async def test_support_model_feedback_reaches_the_synthesiser(small_index: CorpusIndex) -> None:
    def verdict(request):  # type: ignore[no-untyped-def]
        claim = request.messages[-1].content
        return '{"supported": %s}' % ("false" if "Amsterdam" in claim else "true")

    model = research_model(synthesize=[VAN_GOGH, ANSWER], support=verdict)
    # A question naming no source by its title: the retry stays in one request.
    question = "Who painted the Grande Jatte?"
    run = await loop_for(model, [CorpusProvider(small_index)], support="model").run(question)
    assert isinstance(run.response, AgentResponse), run.response
    assert "Seurat" in run.response.final_answer
    synth = [r for r in model.requests if (r.json_schema or {}).get("title") == "SynthesisDraft"]
    assert len(synth) == 2
    assert "do not say" in "\n".join(m.content for m in synth[1].messages)


async def test_an_unknown_support_method_is_an_invalid_request(small_index: CorpusIndex) -> None:
    run = await ResearchLoop(model=research_model(), providers=[CorpusProvider(small_index)]).run(
        QUESTION, support="magic"
    )
    assert isinstance(run.response, ErrorResponse)
    assert run.response.error.type == "invalid_request"


# -- 2. unsupported claims are removed and reported ------------------------------------


async def test_an_unsupported_cited_sentence_is_removed_and_reported(
    small_index: CorpusIndex,
) -> None:
    answer = {
        "answer": ANSWER["answer"] + " It was painted in Amsterdam in 1950 [1].",
        "citations": ["[1]"],
    }
    run = await loop_for(research_model(synthesize=answer), [CorpusProvider(small_index)]).run(
        QUESTION
    )
    response = run.response
    assert isinstance(response, AgentResponse), response
    assert "Amsterdam" not in response.final_answer and "Amsterdam" not in response.summary
    assert response.final_answer == ANSWER["answer"]
    assert response.citations.unsupported_claims == ["It was painted in Amsterdam in 1950."]
    assert response.citations.removed_claims == ["It was painted in Amsterdam in 1950."]
    assert run.synthesis is not None and "Amsterdam" not in run.synthesis.answer


async def test_an_uncited_claim_no_source_supports_is_flagged(small_index: CorpusIndex) -> None:
    answer = {
        "answer": ANSWER["answer"] + " Seurat later invented cubism in 1907. "
        "Georges Seurat was a French post-Impressionist artist.",
        "citations": ["[1]"],
    }
    run = await loop_for(research_model(synthesize=answer), [CorpusProvider(small_index)]).run(
        QUESTION
    )
    response = run.response
    assert isinstance(response, AgentResponse), response
    assert response.citations.unsupported_claims == ["Seurat later invented cubism in 1907."]
    assert "cubism" not in response.final_answer
    assert "French post-Impressionist artist" in response.final_answer  # a source says it


# -- 7. every retry, reformulation, fallback and breaker trip is in `errors` -------------


async def test_fallbacks_and_reformulations_are_response_errors() -> None:
    painting = hit(
        "La Grande Jatte",
        "A Sunday Afternoon on the Island of La Grande Jatte was painted by Georges Seurat.",
    )
    primary = FakeProvider("primary", [transient("HTTP 503")])
    backup = FakeProvider("backup", lambda q: [painting] if q == QUESTION else [])
    run = await loop_for(research_model(reflect=INSUFFICIENT), [primary, backup], max_iters=2).run(
        QUESTION
    )
    response = run.response
    assert isinstance(response, AgentResponse), response
    kinds = {e.get("what") for e in response.errors}
    assert {"retry", "provider_failed", "fallback", "reformulate"} <= kinds
    fallback = next(e for e in response.errors if e.get("what") == "fallback")
    assert fallback["provider"] == "backup" and fallback["tier"] == 4
    assert fallback["query"] == QUESTION
    opened = [e for e in response.errors if e.get("what") == "provider_circuit_open"]
    assert [(e["provider"], e["tier"]) for e in opened] == [("primary", 4)]
    # every such event in the trace has its entry in the response
    for what in ("reformulate", "fallback", "provider_failed"):
        events = [e for e in run.trace.of_kind("note") if e.data.get("what") == what]
        entries = [e for e in response.errors if e.get("what") == what]
        assert events and len(entries) == len(events), what
    retries = run.trace.of_kind("retry")
    assert len([e for e in response.errors if e.get("what") == "retry"]) == len(retries)
    # the broader queries code chose for the next iteration are reported too
    assert any(e["phase"] == "reformulate" for e in response.errors)


async def test_a_breaker_trip_is_a_response_error() -> None:
    run = await loop_for(
        research_model(), [FakeProvider("down", [transient()])], tier="standard"
    ).run(QUESTION)
    response = run.response
    assert isinstance(response, AgentResponse) and response.degraded_mode
    opened = [e for e in response.errors if e.get("what") == "circuit_open"]
    assert len(opened) == 1 and opened[0]["tier"] == 3
    assert "3 consecutive search failures" in str(opened[0]["error"])
