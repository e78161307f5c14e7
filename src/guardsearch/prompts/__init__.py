"""Prompt templates: the packaged `*.j2` files in this folder and `PromptTemplate`, which
renders one into chat messages with the pinned objective first."""

from guardsearch.prompts.template import PromptTemplate, prompt

__all__ = ["PromptTemplate", "prompt"]
