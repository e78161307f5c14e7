"""Model protocol and backends (llama.cpp, OpenAI-compatible, scripted, replay) and the
wrappers around any model: Metered (budgets) and CachedModel (caches).

The models and wrappers are exported by `guardsearch` itself (docs/api.md); a backend's
helpers (`TokenCounter`, `estimate_prompt_tokens`) live in `guardsearch.models.base`.
"""
