"""The inner loop's parts: the adaptive band, the query and its memo key, the merged probe."""

from __future__ import annotations

from pathlib import Path

import pytest

from guardsearch.apps.probe.prober import CorpusProber
from guardsearch.apps.probe.query import ProbeQuery
from guardsearch.core.errors import BudgetExceeded, ConfigError
from guardsearch.core.source import Source
from guardsearch.corpus import CorpusIndex, Document
from guardsearch.loops.inner_outer import AdaptiveBand, ControlBudget, Observation
from guardsearch.loops.inner_outer.memo import QueryMemo
from guardsearch.loops.inner_outer.scoring import ScoreContext, WeightedScorer


def test_band_ema_and_agreement() -> None:
    band = AdaptiveBand(lo=5, hi=40, alpha=0.5)
    band = band.observe(100)
    assert band.ema == 100 and band.misses == 1
    band = band.observe(20)
    assert band.ema == 60 and band.misses == 0
    assert band.contains(20) and not band.contains(41)
    assert band.agrees(20, 16) and not band.agrees(20, 5) and not band.agrees(20, None)


def test_band_recentres_towards_the_ema_after_repeated_misses() -> None:
    band = AdaptiveBand(lo=5, hi=40, alpha=1.0, adapt_after=2)
    band = band.observe(400)
    assert (band.lo, band.hi) == (5, 40)
    band = band.observe(400)  # second miss in a row: the band moves halfway (log) to 400
    assert band.lo > 5 and band.hi > 40
    assert band.hi / band.lo == pytest.approx(8.0, rel=1e-3)
    assert band.misses == 0


def test_band_rejects_bad_settings_and_widens() -> None:
    with pytest.raises(ConfigError):
        AdaptiveBand(lo=10, hi=5)
    wide = AdaptiveBand(lo=8, hi=40).widened(2)
    assert (wide.lo, wide.hi) == (4, 80)


def test_query_key_is_normalised_and_expression_is_safe() -> None:
    a = ProbeQuery(must=("Painter", "french", "french"))
    b = ProbeQuery(must=("FRENCH", "painter"))
    assert a.key() == b.key() == "must=french|painter"
    q = ProbeQuery(must=('van" Gogh OR x',), described=("painter",), exclude=("museum",))
    assert q.expression() == '("van gogh" AND description : "painter") NOT "museum"'
    with pytest.raises(ConfigError):
        ProbeQuery(exclude=("x",))


def test_memo_returns_entries_by_key_and_counts_hits() -> None:
    memo = QueryMemo()
    obs = Observation(query="q", key="k", count=3, hits=())
    assert memo.get("k") is None
    memo.put(obs)
    again = memo.get("k")
    assert again is not None and again.from_memo and again.count == 3
    assert (memo.hits, memo.misses) == (1, 1)


def test_result_hash_depends_on_results_not_on_the_query() -> None:
    hits = (Source(id="1", title="a"), Source(id="2", title="b"))
    one = Observation(query="x", key="x", count=2, hits=hits)
    two = Observation(query="y", key="y", count=2, hits=hits)
    three = Observation(query="y", key="y", count=2, hits=hits[:1])
    assert one.result_hash == two.result_hash != three.result_hash


def test_weighted_scorer_combines_objectives_by_weight() -> None:
    ctx = ScoreContext.of("French painters", "painter")
    good = Source(id="1", title="Monet", description="French painter", text="", score=1.0)
    bad = Source(id="2", title="Paris", description="Capital of France", text="", score=1.0)
    scorer = WeightedScorer()
    assert scorer.score(good, ctx) > scorer.score(bad, ctx)
    only_relevance = WeightedScorer(weights={"relevance": 1.0})
    assert only_relevance.score(good, ctx) == only_relevance.score(bad, ctx) == 1.0
    with pytest.raises(ConfigError):
        WeightedScorer(weights={"nope": 1.0})


def test_control_budget_reports_both_layers() -> None:
    budget = ControlBudget.of(3, 2, outer_reserve=1)
    assert budget.outer.remaining().calls == 3 and not budget.outer_low
    budget.charge_probe()
    budget.charge_probe()
    assert budget.inner_exhausted
    with pytest.raises(BudgetExceeded):
        budget.charge_probe()
    assert budget.as_dict()["inner"]["used_probes"] == 2
    assert budget.as_dict()["outer"]["limit_calls"] == 3


def test_the_outer_budget_is_low_when_one_more_call_would_eat_the_reserve() -> None:
    assert ControlBudget.of(1, outer_reserve=1).outer_low  # the one call left is the reserve
    assert not ControlBudget.of(2, outer_reserve=1).outer_low
    assert not ControlBudget.of(1, outer_reserve=0).outer_low


def test_corpus_prober_runs_a_beam_in_one_call_with_per_variant_counts(tmp_path: Path) -> None:
    index = CorpusIndex(tmp_path / "i.sqlite3")
    rows = [
        ("Monet", "French painter"),
        ("Manet", "French painter"),
        ("Paris", "City in France"),
        ("Rembrandt", "Dutch painter"),
        ("Louvre", "Art museum in Paris"),
    ]
    index.add(
        "c",
        [
            Document(corpus="c", key=t, title=t, description=d, body=f"{t} {d}", location=f"u/{t}")
            for t, d in rows
        ],
    )
    prober = CorpusProber(index, k=10)
    queries = [
        ProbeQuery(must=("painter",)),
        ProbeQuery(must=("french", "painter")),
        ProbeQuery(described=("museum",)),
    ]
    import asyncio

    observations = asyncio.run(prober.probe(queries, [q.key() for q in queries]))
    assert prober.calls == 1
    assert [o.count for o in observations] == [3, 2, 1]
    assert {h.title for h in observations[1].hits} == {"Monet", "Manet"}
    assert [h.title for h in observations[2].hits] == ["Louvre"]
    index.close()
