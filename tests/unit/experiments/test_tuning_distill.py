"""Heuristic tuning and distillation, on hand-made traces and the fake model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import result

from guardsearch.apps.game24.suite import suite as game24
from guardsearch.apps.game24.weighted import DEFAULT_WEIGHTS, WeightedGame24Space
from guardsearch.experiments import ExperimentConfig, ExperimentRunner
from guardsearch.experiments.distill import (
    distillation_summary,
    pick,
    source_cost,
    winning_paths,
)
from guardsearch.experiments.tuning import (
    goal_below,
    labelled_nodes,
    propose_threshold,
    propose_weights,
    proposer_yield,
    tuning_markdown,
    tuning_report,
)


def node(ident: str, parent: str, score: float, status: str = "expanded", **kw: Any) -> dict:
    good = score >= 0.5
    return {
        "id": ident,
        "parent": parent,
        "depth": kw.pop("depth", 1),
        "text": f"step {ident}",
        "score": score,
        "status": status,
        "expansions": kw.pop("expansions", 1),
        "checks": {"good sign": good, "noise": ident.endswith(("1", "3"))},
        "winning": kw.pop("winning", False),
        **kw,
    }


def trials() -> list:
    # Trial 1: n1 (high) dead-ends, n2 (low) leads to the goal n4.
    one = [
        node("n1", "n0", 0.9),
        node("n2", "n0", 0.3, winning=True),
        node("n3", "n1", 0.8, depth=2, status="failed", expansions=0),
        node("n4", "n2", 1.0, depth=2, status="goal", expansions=0, winning=True),
    ]
    # Trial 2: n1 (high) leads to the goal, n2 (low) expanded and dead.
    two = [
        node("n1", "n0", 0.8, winning=True),
        node("n2", "n0", 0.2),
        node("n5", "n1", 1.0, depth=2, status="goal", expansions=0, winning=True),
    ]
    return [
        result(problem="a", method="astar", detail={"nodes": one}),
        result(problem="b", method="astar", detail={"nodes": two}),
    ]


def test_goal_below_walks_up_from_goals() -> None:
    nodes = trials()[0].detail["nodes"]
    below = goal_below(nodes)
    assert below["n2"] and below["n0"] and not below["n1"]


def test_only_expanded_non_goal_nodes_are_labelled() -> None:
    labelled = labelled_nodes(trials())
    assert sorted((ln.trial[0], ln.node["id"], ln.leads_to_goal) for ln in labelled) == [
        ("a", "n1", False),
        ("a", "n2", True),
        ("b", "n1", True),
        ("b", "n2", False),
    ]


def test_the_report_finds_misleading_highs_and_missed_lows() -> None:
    report = tuning_report(trials(), high=0.7, low=0.4)
    assert report["misleading_high"] == 1
    assert report["misleading_examples"][0]["node"] == "n1"
    assert report["misleading_high_by_depth"] == {"1": 1}
    assert report["missed_low"] == 1
    assert report["missed_examples"][0]["score"] == 0.3
    stats = report["features"]["good sign"]
    assert (stats["present"], stats["absent"]) == (2, 2)
    text = tuning_markdown(report)
    assert "misleading highs" in text and "| good sign | 2 / 2 |" in text


def expansion_end(children: int, dropped: int) -> dict:
    data = {"phase": "end", "children": [f"n{i}" for i in range(children)], "dropped": dropped}
    return {"kind": "expansion", "data": data}


def test_the_proposer_yield_counts_repeats_and_searches_that_ran_dry() -> None:
    runs = [
        result(problem="a", method="astar", succeeded=False, termination="all_pruned", calls=7),
        result(problem="b", method="astar", succeeded=False, calls=10),  # budget_exhausted
        result(problem="c", method="astar", calls=4),
    ]
    traces = {
        "a": [expansion_end(3, 1), expansion_end(0, 4), {"kind": "expansion", "data": {}}],
        "b": [expansion_end(2, 0)],
        "c": [expansion_end(1, 1)],
    }
    found = proposer_yield(runs, lambda r: traces[r.problem])
    assert (found["candidates"], found["repeats"]) == (12, 6)
    assert found["repeat_share"] == 0.5
    assert (found["failed"], found["ran_dry"], found["ran_dry_calls_left"]) == (2, 1, [3])
    report = tuning_report(runs, events_of=lambda r: traces[r.problem])
    assert "12 candidates offered, 6 (50%) dropped as repeats; 1 of 2 failed searches ran dry" in (
        tuning_markdown(report)
    )


def test_weights_follow_the_likelihood_ratio() -> None:
    stats = {
        "helps": {"ratio": 4.0},
        "hurts": {"ratio": 0.5},
        "neutral": {"ratio": 1.0},
    }
    assert propose_weights(stats) == {"helps": 3.0, "hurts": 0.0, "neutral": 0.0}
    assert propose_weights({"a": {"ratio": 1.0}}) == {"a": 3.0}


def test_the_threshold_keeps_every_goal_leading_node() -> None:
    # Goal-leading nodes scored 0.3 and 0.8; the dead 0.2 node lies below both.
    proposal = propose_threshold(labelled_nodes(trials()))
    assert proposal["threshold"] == 0.3
    assert (proposal["pruned_nodes"], proposal["saved_expansions"]) == (1, 1)
    # In trial a alone the only dead node scored 0.9: no threshold helps.
    assert propose_threshold(labelled_nodes(trials()[:1]))["threshold"] is None


async def test_a_tuned_space_scores_with_its_weights_and_prunes_below_threshold() -> None:
    from fractions import Fraction

    from guardsearch.search.space import Proposal

    space = WeightedGame24Space(
        numbers=(Fraction(1), Fraction(1), Fraction(4), Fraction(6)),
        weights={"whole numbers": 0.0, "divide 24": 0.0, "at most 24": 1.0},
        threshold=0.5,
    )
    root = space.root()
    proposal = Proposal(state={"left": [["30", "x"], ["1", "1"], ["4", "4"]]}, text="t")
    verdict = await space.evaluate(None, proposal, root.context)  # type: ignore[arg-type]
    assert verdict.score == 0.0 and not verdict.passed
    ok = Proposal(state={"left": [["2", "x"], ["4", "4"], ["6", "6"]]}, text="t")
    assert (await space.evaluate(None, ok, root.context)).passed  # type: ignore[arg-type]
    assert set(DEFAULT_WEIGHTS) == set(game24.node_features({"left": ["1", "2"]}))


def test_the_tuned_method_reruns_through_the_runner(tmp_path: Path, fake_model: str) -> None:
    cfg = ExperimentConfig.parse(
        {
            "suite": "game24",
            "problems": ["1 1 4 6", "4 5 6 10"],
            "methods": [
                "astar",
                {
                    "label": "astar-tuned",
                    "method": "astar",
                    "options": {"weights": {"whole numbers": 1, "divide 24": 1}, "threshold": 0.1},
                },
            ],
            "model": fake_model,
            "budgets": [20],
            "out": str(tmp_path),
            "compare": [["astar-tuned", "astar"]],
        }
    )
    card = ExperimentRunner(cfg).run()
    pairs = {(d["method"], d["vs"]) for d in card["deltas"]}
    assert ("astar-tuned", "astar") in pairs
    assert card["methods"]["astar-tuned"]["n"] == 2


def test_winning_paths_are_picked_evenly_and_costed() -> None:
    won = [
        result(problem=p, method="astar", calls=c, detail={"path": ["x"], "numbers": "1 1 4 6"})
        for p, c in [("d", 4), ("a", 2), ("c", 3), ("b", 5)]
    ]
    lost = result(problem="e", method="astar", succeeded=False, detail={"path": ["y"]})
    paths = winning_paths([*won, lost], "astar")
    assert [r.problem for r in paths] == ["a", "b", "c", "d"]
    assert [r.problem for r in pick(paths, 2)] == ["a", "c"]
    assert len(pick(paths, 10)) == 4
    cost = source_cost(pick(paths, 2))
    assert (cost["examples"], cost["calls"], cost["problems"]) == (2, 5, ["a", "c"])


def test_game24_turns_paths_into_cot_examples() -> None:
    r = result(
        problem="a",
        method="astar",
        answer="(1 + 1) * ...",
        detail={"path": ["1 + 1 = 2 (left: 2 4 6)"], "numbers": "1 1 4 6"},
    )
    assert game24.examples([r]) == [
        {"numbers": "1 1 4 6", "steps": ["1 + 1 = 2 (left: 2 4 6)"], "answer": "(1 + 1) * ..."}
    ]


def test_the_distillation_summary_reads_the_paired_delta() -> None:
    card = {
        "methods": {
            "cot": {"mean_prompt_tokens": 300.0, "mean_calls": 1.0},
            "cot-distilled": {"mean_prompt_tokens": 420.0, "mean_calls": 1.0},
        },
        "deltas": [
            {
                "method": "cot-distilled",
                "vs": "cot",
                "n": 10,
                "successes": 4,
                "successes_vs": 1,
                "delta": 0.3,
                "ci_low": -0.05,
                "ci_high": 0.6,
                "mean_tokens": 500.0,
                "mean_tokens_vs": 380.0,
            }
        ],
    }
    summary = distillation_summary(
        card, linear="cot", distilled="cot-distilled", source={"calls": 30}
    )
    assert summary["rise"] == pytest.approx(0.3)
    assert summary["solved"] == [1, 4]
    assert summary["prompt_tokens_per_call"] == [300.0, 420.0]
    assert summary["source"] == {"calls": 30}
    assert not distillation_summary(card, linear="io", distilled="x", source={})["available"]
