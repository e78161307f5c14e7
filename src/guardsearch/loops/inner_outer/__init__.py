"""The inner/outer loop: a model planner around a deterministic probe policy, under a
two-layer budget (docs/probe.md).

`run_adaptive` runs it with your planner, prober and policy; this package exports what
writing those takes. `guardsearch.run_probe` runs it over a corpus (the probe app).
"""

from guardsearch.loops.inner_outer.band import AdaptiveBand
from guardsearch.loops.inner_outer.budget import ControlBudget
from guardsearch.loops.inner_outer.extensions import (
    FailureClassifier,
    Planner,
    StrategySelector,
    TerminationPolicy,
)
from guardsearch.loops.inner_outer.plan import Evaluation, Observation, ProbePlan
from guardsearch.loops.inner_outer.policy import (
    BandProbePolicy,
    PolicySettings,
    ProbeAction,
    ProbePolicy,
    ProbeState,
)
from guardsearch.loops.inner_outer.runner import AdaptiveResult, Prober, run_adaptive
from guardsearch.loops.inner_outer.timeline import draw_timeline

__all__ = [
    "AdaptiveBand",
    "AdaptiveResult",
    "BandProbePolicy",
    "ControlBudget",
    "Evaluation",
    "FailureClassifier",
    "Observation",
    "Planner",
    "PolicySettings",
    "ProbeAction",
    "ProbePlan",
    "ProbePolicy",
    "ProbeState",
    "Prober",
    "StrategySelector",
    "TerminationPolicy",
    "draw_timeline",
    "run_adaptive",
]
