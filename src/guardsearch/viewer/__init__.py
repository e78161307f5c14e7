"""The run viewer: the page of the live UI (`guardsearch serve`, /ui) and the one-file
page of a run (`guardsearch runs view`), drawn by one template and one script."""

from guardsearch.viewer.page import render_run, render_ui

__all__ = ["render_run", "render_ui"]
