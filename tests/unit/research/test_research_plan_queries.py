"""The planner's queries: the same words are one query, and no guard sends a plan back
for repeating them (the task is searched first; a repeat costs nothing)."""

from __future__ import annotations

import pytest

from guardsearch.loops.research.config import ResearchConfig
from guardsearch.loops.research.phases import plan_step
from guardsearch.loops.research.state import Query, ResearchState

TASK = "Which subject is described as: Grand Prince of Kiev from 978 to 1015?"


def searched(*queries: str) -> list[str]:
    state = ResearchState(task=TASK, max_iters=2).with_queries(
        [Query(query=TASK), *(Query(query=q) for q in queries)]
    )
    return [q.query for q in state.plan_queries]


@pytest.mark.parametrize(
    "queries",
    [
        ("Grand Prince of Kiev", "prince kiev grand", "Kiev Grand Prince"),  # reordered
        ("Grand Prince of Kiev", "GRAND PRINCE OF KIEV ", "grand prince of kiev"),  # recased
        ("the Grand Prince of Kiev", "Grand Prince Kiev", "a grand prince of Kiev"),  # stopwords
    ],
)
def test_queries_with_the_same_words_are_one_query(queries: tuple[str, ...]) -> None:
    assert searched(*queries) == [TASK, queries[0]]


def test_queries_with_different_words_are_all_searched() -> None:
    queries = ("Grand Prince of Kiev", "prince kiev grand", "ruler 978 1015")
    assert searched(*queries) == [TASK, "Grand Prince of Kiev", "ruler 978 1015"]


def test_a_query_with_the_task_words_is_not_searched_again() -> None:
    repeat = "subject described as Grand Prince of Kiev from 978 to 1015"
    assert searched(repeat, "Vladimir") == [TASK, "Vladimir"]


def test_a_query_of_stopwords_only_is_compared_by_its_words() -> None:
    assert searched("who is it", "Who is  it", "what is it") == [TASK, "who is it", "what is it"]


def test_the_plan_step_has_no_guard_to_fail_on_repeats() -> None:
    # Its schema still bounds the output (3-6 queries, 80 characters each).
    step = plan_step(ResearchConfig())
    assert step.guard is None
