"""Strategies: small modules over the one expansion engine, each registered by name when
imported here (`guardsearch.search` imports this package). A strategy's options class
lives in its module (`guardsearch.search.strategies.dfs.DFSOptions`, ...). `program`
runs code the model writes instead of asking it at each node (search/program.py)."""

from guardsearch.search.strategies import astar, beam, consensus, dfs, program, refine

__all__ = ["astar", "beam", "consensus", "dfs", "program", "refine"]
