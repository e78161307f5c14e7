"""QualityReport arithmetic, per-domain thresholds, the refinement history, escalation."""

from __future__ import annotations

import pytest

from guardsearch.core.errors import ConfigError
from guardsearch.loops.review import (
    DomainThresholds,
    Escalation,
    Refinement,
    RefinementHistory,
    Verdict,
)
from guardsearch.loops.review.quality import quality_report


def verdicts(accepted: int, **rejected: int) -> list[Verdict]:
    out = [Verdict(key=f"ok{i}", accepted=True) for i in range(accepted)]
    for reason, n in rejected.items():
        out += [Verdict(key=f"{reason}{i}", accepted=False, reason=reason) for i in range(n)]
    return out


def test_report_counts_and_scores_verified_over_fetched() -> None:
    report = quality_report(verdicts(4, educational=5, cage=3, book=3), threshold=0.3)
    assert (report.total_fetched, report.verified, report.rejected) == (15, 4, 11)
    assert report.rejection_breakdown == {"educational": 5, "book": 3, "cage": 3}
    assert report.quality_score == pytest.approx(0.2667, abs=1e-4)
    assert not report.meets_threshold
    assert report.dominant_reasons == ["educational", "book", "cage"]


def test_report_meets_threshold_at_equality_and_not_when_empty() -> None:
    assert quality_report(verdicts(3, x=7), threshold=0.3).meets_threshold
    empty = quality_report([], threshold=0.0)
    assert empty.quality_score == 0.0 and not empty.meets_threshold


def test_report_rejects_bad_threshold_and_duplicates() -> None:
    with pytest.raises(ConfigError):
        quality_report(verdicts(1), threshold=1.5)
    with pytest.raises(ConfigError):
        quality_report([Verdict(key="a", accepted=True)] * 2, threshold=0.3)
    with pytest.raises(ConfigError):
        Verdict(key="a", accepted=False)


def test_thresholds_per_domain_with_default_and_override() -> None:
    thresholds = DomainThresholds({"pricing": 0.3, "docs": 0.5}, default=0.4)
    assert thresholds.for_domain("docs") == 0.5
    assert thresholds.for_domain("unknown") == 0.4
    assert thresholds.with_override("docs", 0.9).for_domain("docs") == 0.9
    with pytest.raises(ConfigError):
        DomainThresholds({"docs": -0.1})


def kw(target: str, *neg: str) -> Refinement:
    return Refinement(
        level="keywords", reason=target, target=target, add_negative_keywords=list(neg)
    )


def test_history_ranks_refinements_that_raised_quality_first_and_skips_tried() -> None:
    history = RefinementHistory()
    history.applied(1, kw("person", "painter"), 0.2)
    history.outcome(0.5)
    history.applied(2, kw("museum", "museum"), 0.5)
    history.outcome(0.4)
    fresh_person, fresh_museum, unknown = kw("person", "artist"), kw("museum", "x"), kw("new", "y")
    ranked = history.rank([fresh_museum, unknown, fresh_person, kw("person", "painter")])
    assert ranked == [fresh_person, unknown, fresh_museum]
    assert history.mean_gain("keywords:person") == pytest.approx(0.3)


def test_history_round_trips_through_json_data() -> None:
    history = RefinementHistory()
    history.applied(1, kw("person", "painter"), 0.2)
    history.outcome(0.6)
    again = RefinementHistory.from_list(history.as_list())
    assert again.as_list() == history.as_list()


def test_escalation_goes_keywords_then_sources_then_replan() -> None:
    escalation = Escalation(min_gain=0.05, max_replans=1)
    history = RefinementHistory()
    assert escalation.levels(history) == ["keywords", "sources", "replan"]
    history.applied(1, kw("person", "a"), 0.2)
    history.outcome(0.4)  # helped: stay at keywords
    assert escalation.levels(history)[0] == "keywords"
    history.applied(2, kw("person", "b"), 0.4)
    history.outcome(0.41)  # did not help: escalate
    assert escalation.levels(history) == ["sources", "replan"]
    history.applied(3, Refinement(level="sources", reason="s", target="x"), 0.41)
    history.outcome(0.41)
    assert escalation.levels(history) == ["replan"]
    history.applied(4, Refinement(level="replan", reason="r", target="x"), 0.41)
    history.outcome(0.3)
    assert escalation.levels(history) == []
