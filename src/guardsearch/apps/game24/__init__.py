"""The Game of 24: make 24 from four numbers with + - * / (Tree of Thoughts' benchmark).

from guardsearch.apps.game24 import solve_game24_sync
solve_game24_sync("4 5 6 10", strategy="astar", model="embedded")

Importing the package registers the app `game24` (guardsearch.registry).
"""

from guardsearch.apps.game24.app import APP
from guardsearch.apps.game24.arith import check_answer, parse_numbers, solvable
from guardsearch.apps.game24.solve import default_options, puzzles, solve_game24, solve_game24_sync
from guardsearch.apps.game24.space import Game24Space, step_schema

__all__ = [
    "APP",
    "Game24Space",
    "check_answer",
    "default_options",
    "parse_numbers",
    "puzzles",
    "solvable",
    "solve_game24",
    "solve_game24_sync",
    "step_schema",
]
