"""The keys of the `note` events that carry span ids between a run and its spans.

A module of its own so that the span view (otel/spans.py) and the package's entry
points (otel/__init__.py) both read them without importing each other.
"""

from __future__ import annotations

# The `note` a traced run emits with its run span's ids, and the one that tells the
# next run span to link to earlier ones (a resumed durable run's sessions).
SPAN_KEY = "span"
LINKS_KEY = "links"
