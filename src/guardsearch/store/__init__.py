"""Durable runs. For now: the JSON Lines event sink."""

from guardsearch.store.jsonl import JsonlSink, read_events

__all__ = ["JsonlSink", "read_events"]
