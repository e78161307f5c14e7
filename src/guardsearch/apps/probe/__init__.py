"""The `probe` app: corpus search by the inner/outer loop (loops/inner_outer), or its
baseline (one model-written query)."""

from guardsearch.apps.probe.app import ProbeRun, probe
from guardsearch.apps.probe.planner import ModelPlanner
from guardsearch.apps.probe.policy import CorpusProbePolicy
from guardsearch.apps.probe.prober import CorpusProber
from guardsearch.apps.probe.query import ProbeQuery

__all__ = ["CorpusProbePolicy", "CorpusProber", "ModelPlanner", "ProbeQuery", "ProbeRun", "probe"]
