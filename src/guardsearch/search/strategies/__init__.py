"""Strategies: small modules over the one expansion engine, each registered by name when
imported here (`guardsearch.search` imports this package). A strategy's options class
lives in its module (`guardsearch.search.strategies.dfs.DFSOptions`, ...)."""

from guardsearch.search.strategies import astar, beam, consensus, dfs, refine

__all__ = ["astar", "beam", "consensus", "dfs", "refine"]
