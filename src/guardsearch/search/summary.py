"""Path summaries and failure summaries: bounded text about where a branch has been.

`summarize_path` keeps a context's earlier-step results under a token cap however
deep the search goes, so the prompt never overflows the context window: recent results
stay whole, older ones fold into one-line previews. `failure_summary` is the text
for the backtrack channel: which step failed, the guard's feedback, and previews of the
path tried.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from guardsearch.core.context import Context

SUMMARY_STEP = "summary of earlier steps"
PREVIEW_CHARS = 200
_LINE_CHARS = 120

Summarizer = Callable[[Context, int], Context]


def estimate_tokens(text: str) -> int:
    """A cautious token estimate (about 3 characters per token)."""
    return len(text) // 3 + 1


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "..."


def _line(text: str, limit: int = _LINE_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _cut(text: str, tokens: int) -> str:
    chars = max(0, tokens * 3)
    return text if len(text) <= chars else text[: max(0, chars - 1)] + "…"


def summarize_path(context: Context, cap_tokens: int) -> Context:
    """`context` with its earlier-step results under `cap_tokens` (estimated).

    The most recent results are kept whole while they fit in half the cap; the rest
    become one line each under "summary of earlier steps", itself cut to fit.
    """
    artifacts = context.artifacts
    cost = [estimate_tokens(step) + estimate_tokens(text) for step, text in artifacts]
    if sum(cost) <= cap_tokens or not artifacts:
        return context
    half = max(1, cap_tokens // 2)
    kept: list[tuple[str, str]] = []
    used = 0
    for (step, text), c in zip(reversed(artifacts), reversed(cost), strict=True):
        if kept and used + c > half:
            break
        if not kept and c > half:
            text = _cut(text, half - estimate_tokens(step))
            c = half
        kept.append((step, text))
        used += c
    kept.reverse()
    older = artifacts[: len(artifacts) - len(kept)]
    if not older:
        return replace(context, artifacts=tuple(kept))
    lines = [f"- {step}: {_line(text)}" for step, text in older]
    room = max(1, cap_tokens - used - estimate_tokens(SUMMARY_STEP))
    while lines and estimate_tokens("\n".join(lines)) > room:
        lines.pop(0)  # the oldest go first
    summary = "\n".join(lines) if lines else _cut(f"({len(older)} earlier steps)", room)
    return replace(context, artifacts=((SUMMARY_STEP, summary), *kept))


def failure_summary(
    failed_step: str, feedback: str, path: Sequence[tuple[str, str]], advice: str = ""
) -> str:
    """The text that amends an ancestor's context on a backtrack; `advice`
    (what the regenerated step should change, when the space knows) goes last."""
    parts = [
        "## Previous Attempt Failed",
        "",
        f"A downstream step ({failed_step}) failed validation:",
        "",
        f"**Guard feedback**: {feedback}",
        "",
        "The following path was attempted:",
    ]
    parts += [f"- {step}: {preview(text)}" for step, text in path]
    if advice:
        parts += ["", f"**What to change**: {advice}"]
    parts += ["", "Generate a different output that avoids this failure mode."]
    return "\n".join(parts)
