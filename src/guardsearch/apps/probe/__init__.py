"""The `probe` app: corpus search by the inner/outer loop (loops/inner_outer), or its
baseline (one model-written query)."""

from guardsearch.apps.probe.app import ProbeConfig, ProbeRun, probe

__all__ = ["ProbeConfig", "ProbeRun", "probe"]
