"""Strategies: small modules over the one expansion engine, registered by name."""

from guardsearch.search.strategies.astar import AStarOptions, BestFirstOptions
from guardsearch.search.strategies.base import (
    Strategy,
    get_strategy,
    register_strategy,
    strategy_names,
)
from guardsearch.search.strategies.beam import BeamOptions, BFSOptions
from guardsearch.search.strategies.consensus import ConsensusOptions
from guardsearch.search.strategies.dfs import DFSOptions, b_max
from guardsearch.search.strategies.refine import RefineOptions

__all__ = [
    "AStarOptions",
    "BFSOptions",
    "BeamOptions",
    "BestFirstOptions",
    "ConsensusOptions",
    "DFSOptions",
    "RefineOptions",
    "Strategy",
    "b_max",
    "get_strategy",
    "register_strategy",
    "strategy_names",
]
