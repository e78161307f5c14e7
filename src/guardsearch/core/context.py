"""Context: the immutable input of a step.

It pins the primary objective (always rendered first), carries prior artifacts and
constraints, and keeps two feedback channels apart (docs/guards.md):

- `feedback`: the retry channel, "your previous output for *this* step was rejected
  because ..."; with it, `tried`: the outputs already judged at this step (each with
  its verdict), so a retry can be told what not to answer again (issue 16);
- `failures`: the backtrack channel, "a *later* step failed because of what this
  step produced ...", kept in a bounded window of the most recent N with older ones
  folded into a short summary, so failed branches inform later ones without
  crowding the prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from guardsearch.core.digest import stable_digest
from guardsearch.core.errors import ConfigError

DEFAULT_WINDOW = 3
TRIED_WINDOW = 5  # outputs already judged at this step that a retry prompt lists
_TRIED_CHARS = 160
# A verdict's fix comes after its finding ("dead-end: ... Fix: add a recovery step X and
# set ..."): cut at 160 characters, the listed verdict lost the part the model can act on.
_VERDICT_CHARS = 360
_SUMMARY_CHARS = 600
_LINE_CHARS = 120


def _one_line(text: str, limit: int = _LINE_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True, kw_only=True)
class Context:
    """Everything a step may see. Never mutated: `amend()` returns a new Context."""

    objective: str
    artifacts: tuple[tuple[str, str], ...] = ()
    constraints: tuple[str, ...] = ()
    feedback: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()
    older_failures: str = ""
    dropped_failures: int = 0
    window: int = DEFAULT_WINDOW
    inputs: tuple[tuple[str, str], ...] = field(default=())
    tried: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not self.objective.strip():
            raise ConfigError("a Context needs a non-empty objective")
        if self.window < 1:
            raise ConfigError(f"failure window must be >= 1, got {self.window}")

    def amend(
        self,
        *,
        artifact: tuple[str, str] | None = None,
        constraint: str | None = None,
        feedback: str | None = None,
        failure: str | None = None,
        human_input: tuple[str, str] | None = None,
        tried: tuple[str, str] | None = None,
    ) -> Context:
        """Return a new Context with the given additions (self is untouched).

        `tried` is (output, verdict) for an output already judged at this step: the
        retry channel lists the last `TRIED_WINDOW` of them (an output already listed
        moves to the end)."""
        ctx = self
        if artifact is not None:
            ctx = replace(ctx, artifacts=(*ctx.artifacts, artifact))
        if constraint:
            ctx = replace(ctx, constraints=(*ctx.constraints, constraint))
        if feedback:
            ctx = replace(ctx, feedback=(*ctx.feedback, feedback)[-ctx.window :])
        if failure:
            ctx = ctx._with_failure(failure)
        if human_input is not None:
            ctx = replace(ctx, inputs=(*ctx.inputs, human_input))
        if tried is not None and tried[0].strip():
            shown = (_one_line(tried[0], _TRIED_CHARS), _one_line(tried[1], _VERDICT_CHARS))
            kept = tuple(t for t in ctx.tried if t[0] != shown[0])
            ctx = replace(ctx, tried=(*kept, shown)[-TRIED_WINDOW:])
        return ctx

    def _with_failure(self, failure: str) -> Context:
        failures = (*self.failures, failure)
        if len(failures) <= self.window:
            return replace(self, failures=failures)
        overflow, kept = failures[: -self.window], failures[-self.window :]
        lines = [self.older_failures] if self.older_failures else []
        lines += [f"- {_one_line(f)}" for f in overflow]
        summary = "\n".join(lines)
        if len(summary) > _SUMMARY_CHARS:
            summary = "…" + summary[-(_SUMMARY_CHARS - 1) :]
        return replace(
            self,
            failures=kept,
            older_failures=summary,
            dropped_failures=self.dropped_failures + len(overflow),
        )

    def for_next_step(self) -> Context:
        """The context a following step starts from: the retry channel is per step."""
        return replace(self, feedback=(), tried=())

    def without_failures(self) -> Context:
        return replace(self, failures=(), older_failures="", dropped_failures=0)

    @property
    def digest(self) -> str:
        return stable_digest(self)

    def render(self) -> str:
        """Render as prompt text; the primary objective always comes first."""
        parts = [f"Primary objective: {self.objective}"]
        if self.inputs:
            parts.append(
                "## Input from a person\n" + "\n".join(f"- {q}: {a}" for q, a in self.inputs)
            )
        if self.artifacts:
            parts.append(
                "## Results of earlier steps\n"
                + "\n\n".join(f"### {step}\n{text}" for step, text in self.artifacts)
            )
        if self.constraints:
            parts.append("## Constraints\n" + "\n".join(f"- {c}" for c in self.constraints))
        if self.failures or self.older_failures:
            block = ["## Downstream failures of earlier attempts"]
            if self.older_failures:
                block.append(
                    f"({self.dropped_failures} older failure(s), summarised)\n"
                    + self.older_failures
                )
            block += list(self.failures)
            block.append("Produce a different output that avoids these failure modes.")
            parts.append("\n\n".join(block))
        tried = [f"- {out}" + (f" -> {why}" if why else "") for out, why in self.tried]
        if self.feedback:
            lines = ["## Your previous output for this step was rejected"]
            lines += [f"- attempt {i + 1}: {f}" for i, f in enumerate(self.feedback)]
            if tried:
                lines += ["Already answered at this step (give a different answer):", *tried]
            lines.append("Fix these problems in your next answer.")
            parts.append("\n".join(lines))
        elif tried:  # e.g. a node regenerated after a backtrack: nothing was rejected here
            parts.append(
                "## Already answered at this step (give a different answer)\n" + "\n".join(tried)
            )
        return "\n\n".join(parts)
