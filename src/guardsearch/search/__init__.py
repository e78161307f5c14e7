"""Search: one expansion engine, strategies chosen by name, and the search tree.

    from guardsearch.search import StepSpace, search

    result = await search(space, strategy="dfs", model=model, budget=budget)

Strategies: dfs (feedback-guided backtracking), bfs, beam, astar, best_first,
consensus, refine. See docs/search.md. `guardsearch.run_search` is `search` in the
one call shape of every family; this package adds what writing your own search space,
strategy, heuristic or reducer takes. Anything else is imported from its module
(`guardsearch.search.expand`, ...).
"""

from guardsearch.search import strategies as _strategies  # registers the strategies
from guardsearch.search.expand import EngineOptions
from guardsearch.search.heuristic import Failure, Heuristic, ModelHeuristic, Rule, RuleHeuristic
from guardsearch.search.moves import MoveSpace
from guardsearch.search.node import Node, SearchTree
from guardsearch.search.pipeline import StepSpace
from guardsearch.search.reducers import Reducer, Vote
from guardsearch.search.result import SearchResult
from guardsearch.search.run import search, search_sync
from guardsearch.search.space import BacktrackAdvisor, BaseSpace, Proposal, Root, SearchSpace
from guardsearch.search.state import SearchState, Termination
from guardsearch.search.strategies.astar import AStarOptions, BestFirstOptions
from guardsearch.search.strategies.base import Strategy, register_strategy, strategy_names
from guardsearch.search.strategies.beam import BeamOptions, BFSOptions
from guardsearch.search.strategies.consensus import ConsensusOptions
from guardsearch.search.strategies.dfs import DFSOptions
from guardsearch.search.strategies.refine import RefineOptions

del _strategies

__all__ = [
    "AStarOptions",
    "BFSOptions",
    "BacktrackAdvisor",
    "BaseSpace",
    "BeamOptions",
    "BestFirstOptions",
    "ConsensusOptions",
    "DFSOptions",
    "EngineOptions",
    "Failure",
    "Heuristic",
    "ModelHeuristic",
    "MoveSpace",
    "Node",
    "Proposal",
    "Reducer",
    "RefineOptions",
    "Root",
    "Rule",
    "RuleHeuristic",
    "SearchResult",
    "SearchSpace",
    "SearchState",
    "SearchTree",
    "StepSpace",
    "Strategy",
    "Termination",
    "Vote",
    "register_strategy",
    "search",
    "search_sync",
    "strategy_names",
]
