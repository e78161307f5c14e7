"""Loops: long-running LLM processes steered by guard feedback (research, ...)."""
