"""Model protocol and backends (llama.cpp, OpenAI-compatible, scripted, replay) and the
wrappers around any model: Metered (budgets) and CachedModel (caches)."""

from guardsearch.models.base import (
    Model,
    TokenCounter,
    WrapperModel,
    allow_real_models,
    bound_prompt_tokens,
    estimate_prompt_tokens,
)
from guardsearch.models.cache import CachedModel, CompletionCache, DictCache
from guardsearch.models.metered import Metered
from guardsearch.models.openai import OpenAIModel
from guardsearch.models.replay import FileCache, ReplayModel
from guardsearch.models.scripted import ScriptedModel
from guardsearch.models.spec import DEFAULT_SPEC, default_spec, model_from_spec

__all__ = [
    "DEFAULT_SPEC",
    "CachedModel",
    "CompletionCache",
    "DictCache",
    "FileCache",
    "Metered",
    "Model",
    "OpenAIModel",
    "ReplayModel",
    "ScriptedModel",
    "TokenCounter",
    "WrapperModel",
    "allow_real_models",
    "bound_prompt_tokens",
    "default_spec",
    "estimate_prompt_tokens",
    "model_from_spec",
]
