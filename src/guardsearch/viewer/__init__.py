"""The trace viewer: one self-contained HTML page per run (tree, winning path, events)."""

from guardsearch.viewer.page import render_run

__all__ = ["render_run"]
