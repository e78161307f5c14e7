"""OpenTelemetry traces of every run, in the GenAI semantic conventions.

    pip install 'guardsearch[otel]'
    OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 guardsearch solve game24 "4 5 6 10"

Off unless asked: with the `otel` extra installed and an OTLP endpoint in the
environment (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`),
`--otel` on a command, or `enable()` in code, every Trace made from then on gets a
subscriber that turns its events into spans (otel/spans.py): run -> phase or
expansion -> step -> attempt -> model call and guard verdict. The events stay the
exact record; the spans are a view of them. Nothing in this module imports
opentelemetry until tracing is turned on, so a process that does not ask for it pays
nothing (docs/observability.md).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from guardsearch.core.events import Trace

# This module is imported by `import guardsearch` (to read the environment): it keeps to
# the standard library until tracing is turned on, so start-up does not change.

ENDPOINT_ENVS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
# The opt-in the OpenTelemetry GenAI instrumentations use for prompt and completion text.
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
DISABLED_ENV = "OTEL_SDK_DISABLED"
# Set in the span export process (otel/export_process.py): it makes spans, never traces.
EXPORTER_ENV = "GUARDSEARCH_OTEL_EXPORTER"
# Export from the run's own process (the SDK's batching thread) instead.
IN_PROCESS_ENV = "GUARDSEARCH_OTEL_IN_PROCESS"
INSTALL_HINT = "pip install 'guardsearch[otel]'"


class _Tracing:
    """What `enable` set up: the tracer every view uses, and how to stop."""

    def __init__(self, tracer: Any, provider: Any, capture_content: bool, unwatch: Any) -> None:
        self.tracer = tracer
        self.provider = provider
        self.capture_content = capture_content
        self.unwatch = unwatch


_tracing: _Tracing | None = None


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def requested() -> bool:
    """Does the environment ask for traces (an OTLP endpoint, and the SDK not disabled)?"""
    if _truthy(os.environ.get(DISABLED_ENV)) or os.environ.get(EXPORTER_ENV):
        return False
    return any(os.environ.get(name) for name in ENDPOINT_ENVS)


def capture_content_requested() -> bool:
    """Did the user opt in to prompt and completion text on the spans?"""
    return _truthy(os.environ.get(CAPTURE_ENV))


def enabled() -> bool:
    return _tracing is not None


def tracer() -> Any:
    """The tracer the spans are made with (None while tracing is off)."""
    return _tracing.tracer if _tracing is not None else None


def enable(*, provider: Any = None, capture_content: bool | None = None) -> None:
    """Turn tracing on for every Trace made from now on (again: no change).

    `provider` is the TracerProvider to use (tests: one with an in-memory exporter);
    by default the one the process already set up, else a new one that sends spans
    over OTLP/HTTP to the endpoint in the environment (default http://localhost:4318),
    made in a separate export process (otel/forward.py; `GUARDSEARCH_OTEL_IN_PROCESS=1`:
    in this one).
    `capture_content` puts prompts and completions on the model-call spans (default:
    `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`). Raises ConfigError when the
    `otel` extra is not installed.
    """
    from guardsearch.core.errors import ConfigError

    global _tracing
    if _tracing is not None:
        return
    try:
        from guardsearch.otel.setup import start
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("opentelemetry"):
            raise
        raise ConfigError(
            f"traces need the OpenTelemetry packages ({exc.name} is missing): {INSTALL_HINT}"
        ) from None
    capture = capture_content_requested() if capture_content is None else capture_content
    in_process = _truthy(os.environ.get(IN_PROCESS_ENV))
    tracer_, provider_, unwatch = start(provider, capture, in_process, EXPORTER_ENV)
    _tracing = _Tracing(tracer_, provider_, capture, unwatch)


def export_stats(timeout_s: float = 60.0) -> dict[str, float] | None:
    """With an export process: flush it, and say how many spans it has made and the CPU
    seconds it has used (benchmarks/otel_overhead.py); None otherwise."""
    channel = getattr(_tracing.provider, "guardsearch_channel", None) if _tracing else None
    if channel is None:
        return None
    if not channel.force_flush(timeout_s):
        from guardsearch.core.errors import ConfigError

        raise ConfigError(f"the span export process did not flush within {timeout_s} s")
    return dict(channel.stats, dropped=channel.dropped)


def disable() -> None:
    """Stop making spans: spans still open end (as errors: `process exit`), no Trace
    makes new ones, and what the provider holds is flushed."""
    global _tracing
    if _tracing is None:
        return
    current, _tracing = _tracing, None
    current.unwatch()
    flush = getattr(current.provider, "force_flush", None)
    if callable(flush):
        flush()


def enable_from_env() -> bool:
    """Turn tracing on when the environment asks for it; True when it is on.

    Asked for without the `otel` extra installed, it says so once (a warning) and
    stays off: a service whose environment names a collector for other programs
    still starts.
    """
    if _tracing is not None:
        return True
    if not requested():
        return False
    from guardsearch.core.errors import ConfigError

    try:
        enable()
    except ConfigError as exc:
        warnings.warn(f"no traces: {exc}", RuntimeWarning, stacklevel=2)
        return False
    return True


def recorded_spans(events: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The run spans that stored events recorded (`note` events with a `span`), oldest
    first: what a resumed durable run links to."""
    from guardsearch.otel.keys import SPAN_KEY  # only once a run resumes: no start-up cost

    found = []
    for event in events:
        data = event.get("data") or {}
        if event.get("kind") == "note" and isinstance(data.get(SPAN_KEY), dict):
            found.append(dict(data[SPAN_KEY]))
    return found


def continue_spans(trace: Trace, events: Iterable[Mapping[str, Any]]) -> None:
    """Make the next run span of `trace` link to the run spans recorded in `events`
    (the earlier sessions of a durable run): a `note` with the `links`, when tracing is
    on and there are any."""
    if _tracing is None:
        return
    spans = recorded_spans(events)
    if spans:
        trace.emit("note", message="continues earlier sessions", links=spans)  # LINKS_KEY


__all__ = [
    "CAPTURE_ENV",
    "ENDPOINT_ENVS",
    "EXPORTER_ENV",
    "IN_PROCESS_ENV",
    "capture_content_requested",
    "continue_spans",
    "disable",
    "enable",
    "enable_from_env",
    "enabled",
    "export_stats",
    "recorded_spans",
    "requested",
    "tracer",
]
