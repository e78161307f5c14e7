"""run_adaptive with scripted planners and table probers: stability, memo, oscillation,
EMA band, budget linkage both ways, and replaceable extension points."""

from __future__ import annotations

from collections.abc import Hashable

from probe_helpers import TableProber, planner_answers

from guardsearch.apps.probe.planner import ModelPlanner
from guardsearch.apps.probe.policy import CorpusProbePolicy
from guardsearch.apps.probe.query import ProbeQuery
from guardsearch.loops.inner_outer import (
    AdaptiveBand,
    ControlBudget,
    Observation,
    PolicySettings,
    ProbePlan,
    ProbePolicy,
    ProbeState,
    run_adaptive,
)
from guardsearch.loops.inner_outer.extensions import MultiObjectiveTermination, RuleClassifier
from guardsearch.models.scripted import ScriptedModel

A = ProbeQuery(must=("alpha", "beta"))
B = ProbeQuery(must=("alpha", "beta", "gamma"))
C = ProbeQuery(any_of=("alpha", "beta"))


def phases(result: object, phase: str) -> list[dict[str, object]]:
    events = result.trace.of_kind("phase")  # type: ignore[attr-defined]
    return [e.data for e in events if e.data.get("phase") == phase]


def counts(query: ProbeQuery) -> int:
    if "thing" in query.described:
        return 20
    if query.any_of:
        return 500
    if "extra" in query.must:
        return 8
    return 100


async def adaptive(prober: TableProber, policy: ProbePolicy | None = None, **kw: object):
    model = ScriptedModel(planner_answers(**kw.pop("answers", {})))  # type: ignore[arg-type]
    return await run_adaptive(
        "alpha beta",
        model=model,
        planner=ModelPlanner(),
        prober=prober,
        policy=policy or CorpusProbePolicy(),
        **kw,  # type: ignore[arg-type]
    )


async def test_inner_loop_stops_when_the_count_is_stable_in_the_band() -> None:
    prober = TableProber(counts)
    result = await adaptive(prober)
    outcome = result.inner[0]
    assert outcome.stop_reason == "stable" and outcome.failure == "ok"
    assert outcome.state.band.contains(outcome.state.count or 0)
    assert outcome.state.band.agrees(outcome.state.count or 0, outcome.state.previous_count)
    assert result.llm_calls == 2  # plan + evaluate: no replan needed
    assert result.evaluation is not None and result.evaluation.satisfied
    assert result.results


async def test_memo_never_probes_a_normalised_query_twice() -> None:
    prober = TableProber(counts)
    result = await adaptive(prober)
    probed = [key for batch in prober.batches for key in batch]
    assert len(probed) == len(set(probed))
    assert result.budget.memo_hits >= 1  # the current query rejoins every beam for free
    assert result.probe_calls == prober.calls == len(prober.batches)
    steps = phases(result, "step")
    assert any(all(step["memo"]) is False and step["memo"][0] for step in steps[1:])


class TablePolicy(CorpusProbePolicy):
    """A policy with scripted moves and fitness (a replaced ProbePolicy)."""

    def __init__(self, fitness: dict[str, float], moves: dict[str, list[ProbeQuery]], **kw):
        super().__init__(**kw)
        self.table = fitness
        self.moves = moves

    def initial_query(self, plan: ProbePlan) -> ProbeQuery:
        return A

    def start(self, state: ProbeState) -> list[Hashable]:
        return []

    def narrow(self, state: ProbeState) -> list[Hashable]:
        return list(self.moves.get("narrow", []))

    def broaden(self, state: ProbeState) -> list[Hashable]:
        return list(self.moves.get("broaden", []))

    def fitness(self, state: ProbeState, observation: Observation) -> float:
        return self.table.get(observation.key, 0.3)


async def test_a_repeated_result_hash_from_another_query_stops_as_oscillation() -> None:
    table = {A.key(): 100, B.key(): 2, C.key(): 100}
    prober = TableProber(lambda q: table[q.key()], same=lambda q: "Y" if q == B else "X")
    policy = TablePolicy(
        {A.key(): 0.1, B.key(): 0.5, C.key(): 0.9}, {"narrow": [B], "broaden": [C]}
    )
    result = await adaptive(prober, policy)
    outcome = result.inner[0]
    assert outcome.stop_reason == "oscillation"
    assert [key for _, key, _ in outcome.state.seen] == [A.key(), B.key(), C.key()]


FIXED_BAND = PolicySettings(band=AdaptiveBand(lo=5, hi=40, adapt_after=10_000))


class EndlessPolicy(TablePolicy):
    """Always a new narrowing variant, all with 100 hits and equal fitness; the band is
    fixed (no EMA adaptation), so only a plateau or a budget can stop it."""

    def __init__(self) -> None:
        super().__init__({}, {}, settings=FIXED_BAND)

    def narrow(self, state: ProbeState) -> list[Hashable]:
        return [ProbeQuery(must=("alpha", "beta", f"t{state.step}"))]


async def test_plateau_triggers_a_replan_and_low_outer_budget_makes_inner_conservative() -> None:
    prober = TableProber(lambda q: 100)
    result = await adaptive(prober, EndlessPolicy(), budget=3)
    assert [o.stop_reason for o in result.inner] == ["plateau", "plateau"]
    assert phases(result, "replan_triggered")[0]["failure"] == "plateau"
    assert len(result.plans) == 2 and result.plans[1].source == "replan"
    assert result.llm_calls == 3  # plan, replan, evaluate
    inits = phases(result, "init")
    assert [i["conservative"] for i in inits] == [False, True]  # 1 call left after the replan


async def test_outer_budget_low_from_the_start_means_beam_of_one_and_no_replan() -> None:
    prober = TableProber(counts)
    result = await adaptive(prober, budget=2)
    assert phases(result, "init")[0]["conservative"] is True
    # a beam of one: the first probe is the start query + 1 variant, later ones 1 new query
    # (the current query rejoins from the memo); the normal beam would be 3 wide
    assert len(prober.batches[0]) == 2
    assert all(len(batch) <= 1 for batch in prober.batches[1:])
    assert len(result.plans) == 1 and result.llm_calls == 2


async def test_no_budget_for_a_replan_means_none_happens() -> None:
    prober = TableProber(lambda q: 100)
    result = await adaptive(prober, EndlessPolicy(), budget=2)
    assert result.inner[0].failure == "plateau"
    assert not phases(result, "replan_triggered") and len(result.plans) == 1


async def test_ema_band_adapts_when_the_target_is_unreachable() -> None:
    settings = PolicySettings(band=AdaptiveBand(lo=5, hi=40, alpha=0.5, adapt_after=2))
    prober = TableProber(lambda q: 400 if not q.described else 300)
    result = await adaptive(prober, CorpusProbePolicy(settings))
    steps = phases(result, "step")
    his = [float(s["hi"]) for s in steps]  # type: ignore[arg-type]
    assert his[0] == 40 and max(his) > 40  # the band moved towards the counts seen
    assert steps[-1]["ema"] is not None


async def test_inner_budget_bounds_probe_calls() -> None:
    prober = TableProber(lambda q: 100)
    result = await adaptive(prober, EndlessPolicy(), budget=2, inner_budget=2)
    assert result.probe_calls == 2 == prober.calls
    assert result.inner[0].stop_reason == "inner_budget"


class CountingSelector:
    def __init__(self, policy: ProbePolicy) -> None:
        self.policy, self.calls = policy, 0

    def select(self, plan: ProbePlan, budget: ControlBudget) -> ProbePolicy:
        self.calls += 1
        return self.policy


class StopAfterOne:
    def stop_reason(self, state: ProbeState, policy: ProbePolicy, budget: ControlBudget):
        return "custom" if state.step >= 1 else None


class AlwaysReplan(RuleClassifier):
    def classify(self, stop_reason: str, state: ProbeState) -> str:
        self.seen = stop_reason  # type: ignore[misc]
        return "needs_replan"

    def wants_replan(self, failure: str) -> bool:
        return failure == "needs_replan"


async def test_extension_points_are_replaceable() -> None:
    prober = TableProber(counts)
    selector = CountingSelector(CorpusProbePolicy())
    classifier = AlwaysReplan()
    model = ScriptedModel(planner_answers())
    result = await run_adaptive(
        "alpha beta",
        model=model,
        planner=ModelPlanner(),
        prober=prober,
        selector=selector,
        classifier=classifier,
        termination=StopAfterOne(),
        budget=3,
    )
    assert [o.stop_reason for o in result.inner] == ["custom", "custom"]
    assert selector.calls == 2 and classifier.seen == "custom"
    assert all(o.state.step == 1 for o in result.inner)


async def test_multi_objective_termination_stops_at_its_target() -> None:
    prober = TableProber(lambda q: 100)
    result = await adaptive(
        prober, EndlessPolicy(), termination=MultiObjectiveTermination(target=0.25)
    )
    assert result.inner[0].stop_reason == "objective_met"


async def test_an_adaptive_result_is_an_outcome_with_usage_and_a_stop_reason() -> None:
    prober = TableProber(lambda q: 100)
    result = await adaptive(prober, EndlessPolicy(), budget=3)
    assert result.succeeded and result.stop_reason == result.inner[-1].stop_reason == "plateau"
    assert result.usage.calls == result.llm_calls == 3  # the outer (model) usage
    data = result.as_dict()
    assert list(data)[:5] == ["succeeded", "stop_reason", "run_id", "usage", "seconds"]
    assert data["usage"] == result.usage.as_dict()
    assert data["stop_reasons"] == ["plateau", "plateau"]
    assert {e["layer"] for e in data["timeline"]} == {"outer", "inner"}
    assert all(e.data["run_id"] == result.run_id for e in result.trace.of_kind("phase"))
