"""The multi-signal evaluator: objective checks, a model-answered rubric, critic -> judge."""

from __future__ import annotations

import pytest

from guardsearch import (
    Artifact,
    Budget,
    ConfigError,
    Context,
    Metered,
    ModelRequest,
    ScriptedModel,
    max_calls,
    member,
)
from guardsearch.guards.evaluator import Evaluator, RubricItem, active_model, using_model

CTX = Context(objective="Write a SQL query that counts orders")
SQL = Artifact(id="a1", step="sql", text="SELECT COUNT(*) FROM orders")


def is_select(value: object, artifact: Artifact, context: Context) -> bool | str:
    return artifact.text.startswith("SELECT") or "not a SELECT statement"


def judge(answers: str) -> ScriptedModel:
    return ScriptedModel(lambda r: answers)


async def test_the_score_is_the_weighted_share_of_passed_checks() -> None:
    evaluator = Evaluator(
        rubric=[RubricItem("Does it count rows?", 2.0), "Does it filter by date?"],
        model=judge('{"q1": true, "q2": false}'),
        threshold=0.6,
    )
    result = await evaluator.check(SQL, CTX)
    assert result.score == pytest.approx(2 / 3)
    assert result.passed
    assert [c.name for c in result.checks if not c.passed] == ["Does it filter by date?"]


async def test_objective_checks_weigh_more_than_rubric_answers() -> None:
    evaluator = Evaluator(
        rubric=["Does it filter by date?"],
        objective=[member(is_select, weight=3.0)],  # soft, but three times a rubric answer
        model=judge('{"q1": false}'),
    )
    result = await evaluator.check(SQL, CTX)
    assert result.score == pytest.approx(0.75) and result.passed


async def test_a_failed_hard_check_scores_zero_without_any_model_call() -> None:
    model = ScriptedModel([])
    evaluator = Evaluator(rubric=["Is it fast?"], objective=[is_select], model=model)
    result = await evaluator.check(Artifact(id="a2", step="sql", text="DROP TABLE orders"), CTX)
    assert not result.passed and result.score == 0.0 and result.hard_failed
    assert "not a SELECT statement" in result.feedback
    assert model.calls == 0


async def test_the_critic_reports_flaws_and_the_judge_reads_them() -> None:
    def answer(request: ModelRequest) -> str:
        if request.json_schema is None:
            return "It counts all orders, including cancelled ones."
        assert "including cancelled ones" in request.messages[-1].content
        return '{"q1": true, "q2": false}'

    model = ScriptedModel(answer)
    evaluator = Evaluator(
        rubric=["Does it count orders?", "Does it skip cancelled orders?"], critic=True, model=model
    )
    result = await evaluator.check(SQL, CTX)
    assert model.calls == 2
    assert not result.passed
    assert "Does it skip cancelled orders? -> judged no" in result.feedback
    assert "critic: It counts all orders, including cancelled ones." in result.feedback
    for request in model.requests:
        assert request.messages[0].content.startswith("Primary objective: Write a SQL query")


async def test_the_judge_is_grammar_constrained_to_one_boolean_per_question() -> None:
    model = judge('{"q1": true}')
    await Evaluator(rubric=["Is it SQL?"], model=model).check(SQL, CTX)
    schema = model.requests[0].json_schema
    assert schema == {
        "type": "object",
        "properties": {"q1": {"type": "boolean"}},
        "required": ["q1"],
        "additionalProperties": False,
    }


async def test_an_unreadable_judge_answer_fails_the_rubric_with_feedback() -> None:
    result = await Evaluator(rubric=["Is it SQL?"], model=judge("yes!")).check(SQL, CTX)
    assert not result.passed and "judge: not parseable as JSON" in result.feedback


async def test_without_a_model_it_uses_the_active_one_and_its_budget() -> None:
    metered = Metered(judge('{"q1": true}'), Budget(max_calls(1)))
    evaluator = Evaluator(rubric=["Is it SQL?"])
    with using_model(metered):
        assert active_model() is metered
        assert (await evaluator.check(SQL, CTX)).passed
    assert metered.usage.calls == 1
    assert active_model() is None


async def test_without_any_model_it_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="needs a model"):
        await Evaluator(rubric=["Is it SQL?"]).check(SQL, CTX)


def test_an_evaluator_needs_something_to_check() -> None:
    with pytest.raises(ConfigError):
        Evaluator()
    with pytest.raises(ConfigError):
        RubricItem("", 1.0)
