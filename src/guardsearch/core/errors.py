"""Error roots: user mistakes (`ConfigError`) are separate from run failures (`RunError`).

Exceptions carry evidence and have no side effects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from guardsearch.core.steering import Steering

if TYPE_CHECKING:
    from guardsearch.core.artifact import Artifact
    from guardsearch.core.usage import Usage


class GuardsearchError(Exception):
    """Root of every error this library raises on purpose."""


class ConfigError(GuardsearchError):
    """The user asked for something that cannot work: a bad spec, file, schema or option."""


class RunError(GuardsearchError):
    """A run could not finish: budget, model or guard failures."""


class BudgetExceeded(RunError):
    """A limit would be exceeded by the next expensive call; carries the usage so far."""

    def __init__(self, reason: str, usage: Usage, limit: str = "") -> None:
        super().__init__(f"budget exceeded: {reason} (used {usage.describe()})")
        self.reason = reason
        self.usage = usage
        self.limit = limit

    @property
    def timed_out(self) -> bool:
        """Was it the deadline (time), not a cap on calls, tokens or cost?"""
        return "deadline" in self.reason


class ModelError(RunError):
    """A model backend failed (after its own retries for transient errors)."""


class StoreError(RunError):
    """The run store could not be read or written (locked, disk full, read-only, gone).

    Not a model error: the model may well have answered. `store` names the store (a
    file, or a PostgreSQL URL without its password); `transient` says whether waiting
    could help (a lock, a full disk, a read-only file, a lost connection) rather than a
    damaged or foreign file.
    """

    def __init__(self, store: str, detail: str, *, transient: bool = False) -> None:
        super().__init__(f"store error ({store}): {detail}")
        self.store = store
        self.detail = detail
        self.transient = transient


class ReplayMiss(ModelError):
    """A replayed model was asked a request it never recorded."""

    def __init__(self, digest: str, path: str) -> None:
        super().__init__(f"no recorded response for request {digest[:12]} in {path}")
        self.digest = digest
        self.path = path


class ParseError(ValueError):
    """Model output could not be parsed; the message is feedback for the model."""


class StepFailed(RunError):
    """A guarded step ran out of retries, or a guard declared the failure fatal.

    Carries the evidence: attempts, the last artifact, every piece of feedback, usage.
    """

    def __init__(
        self,
        step: str,
        *,
        attempts: int,
        last_artifact: Artifact | None,
        feedback: list[str],
        usage: Usage,
        fatal: bool = False,
        steering: Steering | None = None,
    ) -> None:
        why = "fatal guard failure" if fatal else f"no passing output after {attempts} attempt(s)"
        last = feedback[-1] if feedback else "no feedback"
        super().__init__(f"step {step!r}: {why}; last feedback: {last}")
        self.step = step
        self.attempts = attempts
        self.last_artifact = last_artifact
        self.feedback = feedback
        self.usage = usage
        self.fatal = fatal
        self.steering = steering or Steering()

    def evidence(self) -> dict[str, Any]:
        """A JSON-ready summary of what happened."""
        return {
            "step": self.step,
            "attempts": self.attempts,
            "fatal": self.fatal,
            "feedback": list(self.feedback),
            "last_output": self.last_artifact.text if self.last_artifact else None,
            "usage": self.usage.as_dict(),
            "steering": self.steering.as_dict(),
        }
