"""Guards: schema, regex, callable, composites (all/any/majority/weighted), the
multi-signal evaluator and structured (JSON Patch) repairs.

The guard vocabulary is exported by `guardsearch` itself (docs/api.md); import anything
else from its module (`guardsearch.guards.diff`, ...).
"""
