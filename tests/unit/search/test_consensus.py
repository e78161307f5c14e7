"""consensus and its reducers, including how every reducer breaks ties."""

from __future__ import annotations

from guardsearch import Context, GuardResult, ModelRequest, ScriptedModel, Step
from guardsearch.search import Node, StepSpace, Vote, search
from guardsearch.search.reducers import identical, judge_selection, majority_vote


def vote(order: int, answer: str, *, score: float = 1.0, passed: bool = True) -> Vote:
    node = Node(
        id=f"n{order + 1}",
        parent="n0",
        depth=1,
        state=None,
        key=str(order),
        context=Context(objective="o"),
        text=answer,
        verdict=GuardResult(passed=passed, score=score),
        status="goal" if passed else "failed",
    )
    return Vote(node, answer, order)


# -- majority_vote ------------------------------------------------------------------------


def test_majority_vote_picks_the_most_common_answer() -> None:
    votes = [vote(0, "a"), vote(1, "b"), vote(2, "b")]
    assert majority_vote(votes).answer == "b"  # type: ignore[union-attr]


def test_majority_vote_breaks_a_tie_by_the_best_score() -> None:
    votes = [vote(0, "a", score=0.6), vote(1, "b", score=0.9), vote(2, "a"), vote(3, "b")]
    votes[2] = vote(2, "a", score=0.7)
    votes[3] = vote(3, "b", score=0.5)
    assert majority_vote(votes).answer == "b"  # type: ignore[union-attr]


def test_majority_vote_breaks_a_full_tie_by_first_appearance() -> None:
    votes = [vote(0, "a"), vote(1, "b"), vote(2, "b"), vote(3, "a")]
    assert majority_vote(votes).answer == "a"  # type: ignore[union-attr]


def test_majority_vote_counts_only_passing_candidates_when_some_passed() -> None:
    votes = [vote(0, "x", passed=False), vote(1, "x", passed=False), vote(2, "y")]
    assert majority_vote(votes).answer == "y"  # type: ignore[union-attr]


# -- identical (code consensus) --------------------------------------------------------------


def test_identical_needs_a_quorum_of_identical_outputs() -> None:
    votes = [vote(0, "a"), vote(1, "b"), vote(2, "a")]
    assert identical()(votes).answer == "a"  # type: ignore[union-attr]
    assert identical(quorum=3)(votes) is None


def test_identical_without_a_majority_has_no_consensus() -> None:
    votes = [vote(0, "a"), vote(1, "b"), vote(2, "c"), vote(3, "a")]
    assert identical()(votes) is None  # 2 of 4 is not more than half


def test_identical_breaks_a_tie_by_first_appearance() -> None:
    votes = [vote(0, "b"), vote(1, "a"), vote(2, "a"), vote(3, "b")]
    assert identical(quorum=2)(votes).answer == "b"  # type: ignore[union-attr]


# -- judge_selection ----------------------------------------------------------------------------


async def test_judge_selection_takes_the_highest_scored_answer() -> None:
    votes = [vote(0, "a", score=0.5), vote(1, "b", score=0.9), vote(2, "a", score=0.5)]
    winner = await judge_selection()(votes)
    assert winner is not None and winner.answer == "b"


async def test_judge_selection_breaks_a_score_tie_by_votes_then_first_appearance() -> None:
    votes = [vote(0, "a", score=0.8), vote(1, "b", score=0.8), vote(2, "b", score=0.8)]
    assert (await judge_selection()(votes)).answer == "b"  # type: ignore[union-attr]
    votes = [vote(0, "a", score=0.8), vote(1, "b", score=0.8)]
    assert (await judge_selection()(votes)).answer == "a"  # type: ignore[union-attr]


async def test_judge_selection_prefers_a_passing_answer_to_a_higher_failing_score() -> None:
    votes = [vote(0, "a", score=0.99, passed=False), vote(1, "b", score=0.5)]
    assert (await judge_selection()(votes)).answer == "b"  # type: ignore[union-attr]


async def test_judge_selection_can_rejudge_with_another_evaluator() -> None:
    class Prefers:
        name = "prefers-a"

        async def check(self, artifact: object, context: Context) -> GuardResult:
            return GuardResult.ok(score=1.0 if artifact.text == "a" else 0.1)  # type: ignore[attr-defined]

    votes = [vote(0, "b", score=0.9), vote(1, "a", score=0.2)]
    assert (await judge_selection(Prefers())(votes)).answer == "a"  # type: ignore[union-attr]


# -- the consensus strategy -----------------------------------------------------------------


def answers_by_seed(by_seed: dict[int, str]) -> ScriptedModel:
    return ScriptedModel(lambda r: by_seed[r.seed or 0])


def one_step(guard: object = None) -> StepSpace:
    return StepSpace(
        objective="Name the capital of France",
        steps=[Step(name="answer", prompt="Answer in one word.", guard=guard)],  # type: ignore[arg-type]
    )


async def test_consensus_runs_n_seeded_candidates_and_takes_the_majority() -> None:
    model = answers_by_seed({0: "Lyon", 1: "Paris", 2: "Paris", 3: "Nice", 4: "Paris"})
    result = await search(one_step(), "consensus", model=model, n=5, temperature=0.7)
    assert result.succeeded and result.answer == "Paris"
    assert [r.seed for r in model.requests] == [0, 1, 2, 3, 4]
    reduce = result.trace.of_kind("phase")[-1]
    assert reduce.data["votes"] == {"Lyon": 1, "Paris": 3, "Nice": 1}


async def test_duplicates_vote_without_being_evaluated_again() -> None:
    judged: list[str] = []

    def guard(value: str) -> bool:
        judged.append(value)
        return True

    model = answers_by_seed({0: "Paris", 1: "Paris", 2: "Lyon"})
    result = await search(one_step(guard), "consensus", model=model, n=3)
    assert result.answer == "Paris"
    assert judged == ["Paris", "Lyon"]


async def test_a_failing_winner_ends_all_pruned() -> None:
    model = answers_by_seed({0: "BAD", 1: "BAD", 2: "BAD"})
    result = await search(one_step(lambda v: v != "BAD" or "wrong"), "consensus", model=model, n=3)
    assert result.termination == "all_pruned" and not result.succeeded


async def test_no_identical_consensus_ends_all_pruned() -> None:
    model = answers_by_seed({0: "a", 1: "b", 2: "c"})
    result = await search(one_step(), "consensus", model=model, n=3, reducer="identical")
    assert result.termination == "all_pruned"


async def test_judge_selection_uses_the_multi_signal_evaluator_scores() -> None:
    from guardsearch.guards.evaluator import Evaluator

    def answer(request: ModelRequest) -> str:
        if request.json_schema:
            candidate = request.messages[-1].content
            return (
                '{"q1": true, "q2": true}' if "Paris" in candidate else '{"q1": true, "q2": false}'
            )
        return {0: "Lyon", 1: "Paris", 2: "Lyon"}[request.seed or 0]

    evaluator = Evaluator(rubric=["Is it a city?", "Is it the capital?"], threshold=0.5)
    result = await search(
        one_step(evaluator),
        "consensus",
        model=ScriptedModel(answer),
        n=3,
        reducer="judge_selection",
    )
    assert result.answer == "Paris"  # outvoted 2:1, but scored higher


async def test_consensus_over_a_deeper_space_rolls_out_each_candidate() -> None:
    from search_helpers import CountingSpace, path_of

    answers = {"start": "1", "1": "99"}
    model = ScriptedModel(lambda r: answers[path_of(r)])
    result = await search(CountingSpace(goal=99, depth_limit=2), "consensus", model=model, n=2)
    assert result.succeeded and result.answer == [1, 99]
    assert [path_of(r) for r in model.requests] == ["start", "1", "start", "1"]
