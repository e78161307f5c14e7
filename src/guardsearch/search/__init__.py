"""Search: one expansion engine, strategies chosen by name, and the search tree.

    from guardsearch.search import StepSpace, search

    result = await search(space, strategy="dfs", model=model, budget=budget)

Strategies: dfs (feedback-guided backtracking), bfs, beam, astar, best_first,
consensus, refine. See docs/search.md.
"""

from guardsearch.search import strategies as _strategies  # registers the strategies
from guardsearch.search.expand import Checkpoint, Engine, EngineOptions, Expansion
from guardsearch.search.heuristic import (
    FORMAT_RULES,
    GIVE_UP,
    RULES,
    Failure,
    Heuristic,
    ModelHeuristic,
    Rule,
    RuleHeuristic,
)
from guardsearch.search.node import Node, NodeStatus, SearchTree
from guardsearch.search.pipeline import StepSpace
from guardsearch.search.reducers import (
    Reducer,
    Vote,
    get_reducer,
    identical,
    judge_selection,
    majority_vote,
)
from guardsearch.search.result import SearchResult
from guardsearch.search.run import search, search_sync
from guardsearch.search.space import BacktrackAdvisor, BaseSpace, Proposal, Root, SearchSpace
from guardsearch.search.state import TERMINATIONS, SearchState, Table, Termination
from guardsearch.search.strategies import (
    AStarOptions,
    BeamOptions,
    BestFirstOptions,
    BFSOptions,
    ConsensusOptions,
    DFSOptions,
    RefineOptions,
    Strategy,
    b_max,
    get_strategy,
    register_strategy,
    strategy_names,
)
from guardsearch.search.summary import failure_summary, summarize_path

del _strategies

__all__ = [
    "FORMAT_RULES",
    "GIVE_UP",
    "RULES",
    "TERMINATIONS",
    "AStarOptions",
    "BFSOptions",
    "BacktrackAdvisor",
    "BaseSpace",
    "BeamOptions",
    "BestFirstOptions",
    "Checkpoint",
    "ConsensusOptions",
    "DFSOptions",
    "Engine",
    "EngineOptions",
    "Expansion",
    "Failure",
    "Heuristic",
    "ModelHeuristic",
    "Node",
    "NodeStatus",
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
    "Table",
    "Termination",
    "Vote",
    "b_max",
    "failure_summary",
    "get_reducer",
    "get_strategy",
    "identical",
    "judge_selection",
    "majority_vote",
    "register_strategy",
    "search",
    "search_sync",
    "strategy_names",
    "summarize_path",
]
