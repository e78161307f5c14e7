"""The inner/outer loop (seed 003): a model planner around a deterministic probe policy,
under a two-layer budget."""

from guardsearch.loops.inner_outer.band import AdaptiveBand
from guardsearch.loops.inner_outer.budget import ControlBudget
from guardsearch.loops.inner_outer.extensions import (
    DefaultTermination,
    FailureClassifier,
    MultiObjectiveTermination,
    Planner,
    RuleClassifier,
    SingleStrategy,
    StrategySelector,
    TerminationPolicy,
)
from guardsearch.loops.inner_outer.memo import QueryMemo
from guardsearch.loops.inner_outer.plan import Evaluation, Observation, ProbePlan
from guardsearch.loops.inner_outer.policy import (
    BandProbePolicy,
    PolicySettings,
    ProbeAction,
    ProbePolicy,
    ProbeState,
)
from guardsearch.loops.inner_outer.runner import (
    AdaptiveResult,
    InnerOutcome,
    Prober,
    run_adaptive,
)
from guardsearch.loops.inner_outer.scoring import ScoreContext, WeightedScorer
from guardsearch.loops.inner_outer.timeline import Timeline, TimelineEntry, draw_timeline

__all__ = [
    "AdaptiveBand",
    "AdaptiveResult",
    "BandProbePolicy",
    "ControlBudget",
    "DefaultTermination",
    "Evaluation",
    "FailureClassifier",
    "InnerOutcome",
    "MultiObjectiveTermination",
    "Observation",
    "Planner",
    "PolicySettings",
    "ProbeAction",
    "ProbePlan",
    "ProbePolicy",
    "ProbeState",
    "Prober",
    "QueryMemo",
    "RuleClassifier",
    "ScoreContext",
    "SingleStrategy",
    "StrategySelector",
    "TerminationPolicy",
    "Timeline",
    "TimelineEntry",
    "WeightedScorer",
    "draw_timeline",
    "run_adaptive",
]
