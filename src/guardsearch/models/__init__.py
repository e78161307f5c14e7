"""Model protocol and backends: llama.cpp (embedded), OpenAI-compatible, scripted, replay."""

from guardsearch.models.base import (
    Model,
    TokenCounter,
    allow_real_models,
    bound_prompt_tokens,
    estimate_prompt_tokens,
)
from guardsearch.models.metered import Metered
from guardsearch.models.openai import OpenAIModel
from guardsearch.models.replay import ReplayModel
from guardsearch.models.scripted import ScriptedModel
from guardsearch.models.spec import DEFAULT_SPEC, default_spec, model_from_spec

__all__ = [
    "DEFAULT_SPEC",
    "Metered",
    "Model",
    "OpenAIModel",
    "ReplayModel",
    "ScriptedModel",
    "TokenCounter",
    "allow_real_models",
    "bound_prompt_tokens",
    "default_spec",
    "estimate_prompt_tokens",
    "model_from_spec",
]
