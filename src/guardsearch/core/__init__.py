"""Pure types with no I/O: contexts, artifacts, verdicts, budgets, events, outcomes,
sources, errors.

Their public names are exported by `guardsearch` itself (docs/api.md); import anything
else from its module (`guardsearch.core.budget`, ...).
"""
