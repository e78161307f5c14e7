"""Guarded steps: prompt -> model -> parse -> guard -> retry (`step.py`).

`Step`, `run_step` and `attempt_step` are exported by `guardsearch` itself (docs/api.md).
"""
