"""Metered: wraps any Model so every call goes reserve -> execute -> reconcile and is traced.

This is the single place where budgets meet models; steps, guards, searches and loops
all call models through it, so none of them can forget a budget check.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from guardsearch.core.budget import Budget, Reservation
from guardsearch.core.errors import BudgetExceeded, GuardsearchError, ModelError
from guardsearch.core.events import Trace
from guardsearch.core.messages import Completion, ModelRequest
from guardsearch.core.usage import Usage
from guardsearch.models.base import (
    Model,
    Route,
    WrapperModel,
    estimate_prompt_tokens,
    provider_of,
    route_of,
)


@dataclass
class Metered(WrapperModel):
    """A Model that books every call to `inner` against `budget` and records it in `trace`."""

    budget: Budget = field(default_factory=Budget)
    trace: Trace = field(default_factory=Trace)
    default_seed: int = 0

    @property
    def usage(self) -> Usage:
        return self.budget.used

    async def complete(
        self, request: ModelRequest, *, step: str = "", node: str = ""
    ) -> Completion:
        # A model ladder answers with one of its models: reserve at that model's prices
        # and say in the trace which one answered (and why, when it escalated).
        route = route_of(self.inner, request)
        answering = route.model if route is not None else self.inner
        request, reservation = self._reserve(request, answering, step=step, node=node)
        ladder = self._ladder(route, request, answering, step=step, node=node)
        # What was asked of which model, as the call's events record it.
        asked = {
            "model": answering.name,
            "provider": provider_of(answering),
            "reservation": reservation.id,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "seed": request.seed,
            "json": request.json_schema is not None,
        }
        started = time.perf_counter()
        completion = await self._call(request, reservation, asked, started, step=step, node=node)
        self._record(request, completion, reservation, asked, ladder, started, step=step, node=node)
        return completion

    def _reserve(
        self, request: ModelRequest, answering: Model, *, step: str, node: str
    ) -> tuple[ModelRequest, Reservation]:
        """Book the call's worst case against the budget (traced), and cap the request's
        `max_tokens` to what the budget grants."""
        prompt_estimate = estimate_prompt_tokens(self.inner, request)
        try:
            granted = self.budget.grant_completion(prompt_estimate, request.max_tokens)
            reservation = self.budget.reserve(
                Usage(
                    calls=1,
                    prompt_tokens=prompt_estimate,
                    completion_tokens=granted,
                    cost=estimate_cost(answering, prompt_estimate, granted),
                )
            )
        except BudgetExceeded as exc:
            self.trace.emit(
                "budget_exceeded", step=step, node=node, reason=exc.reason, used=exc.usage.as_dict()
            )
            raise
        self.trace.emit(
            "budget_reserve",
            step=step,
            node=node,
            reservation=reservation.id,
            prompt_tokens=prompt_estimate,
            completion_tokens=granted,
        )
        if granted != request.max_tokens:
            request = request.with_max_tokens(granted)
        return request, reservation

    def _ladder(
        self,
        route: Route | None,
        request: ModelRequest,
        answering: Model,
        *,
        step: str,
        node: str,
    ) -> dict[str, object]:
        """The ladder fields of the call's events (none off a ladder); an escalation is
        traced on its own."""
        if route is None:
            return {}
        ladder: dict[str, object] = {
            "rung": route.index,
            "start": route.start,
            "role": request.call.role,
        }
        if route.escalated:
            ladder["escalated"] = route.reason
            self.trace.emit(
                "model_escalation", step=step, node=node, model=answering.name, **ladder
            )
        return ladder

    async def _call(
        self,
        request: ModelRequest,
        reservation: Reservation,
        asked: dict[str, object],
        started: float,
        *,
        step: str,
        node: str,
    ) -> Completion:
        """The inner model's completion; a failure closes the reservation, is traced and
        comes out as a `ModelError` (guardsearch errors and cancellation as they are)."""
        try:
            return await self.inner.complete(request)
        except BaseException as exc:
            # A failed (or cancelled) call may still have been paid for; count the call,
            # no tokens. Cancellation too must close the reservation, or it leaks.
            self.budget.reconcile(reservation, Usage(calls=1))
            self.trace.emit(
                "model_error",
                step=step,
                node=node,
                error=str(exc),
                error_type=type(exc).__name__,
                wall_s=time.perf_counter() - started,
                **asked,
            )
            if isinstance(exc, GuardsearchError) or not isinstance(exc, Exception):
                raise
            raise ModelError(f"{self.inner.name}: {exc}") from exc

    def _record(
        self,
        request: ModelRequest,
        completion: Completion,
        reservation: Reservation,
        asked: dict[str, object],
        ladder: dict[str, object],
        started: float,
        *,
        step: str,
        node: str,
    ) -> None:
        """Settle the reservation at the call's real usage and trace the call."""
        wall = time.perf_counter() - started
        actual = completion.usage if completion.usage.calls else _with_one_call(completion.usage)
        refund = self.budget.reconcile(reservation, actual)
        self.trace.emit(
            "budget_reconcile",
            step=step,
            node=node,
            reservation=reservation.id,
            refund_tokens=refund.total_tokens,
            used=self.budget.used.as_dict(),
        )
        content = _content(request, completion) if self.trace.record_content else {}
        self.trace.emit(
            "model_call",
            step=step,
            node=node,
            **asked,
            digest=request.digest(),
            prompt_tokens=actual.prompt_tokens,
            completion_tokens=actual.completion_tokens,
            cached_prompt_tokens=actual.cached_prompt_tokens,
            latency_s=completion.latency_s or wall,
            wall_s=wall,
            finish_reason=completion.finish_reason,
            **({"server": dict(completion.details)} if completion.details else {}),
            **ladder,
            **content,
        )
        fallback = completion.details.get("structured_fallback")
        if fallback:
            self.trace.emit("note", step=step, node=node, structured_fallback=fallback)


def estimate_cost(model: Model, prompt_tokens: int, completion_tokens: int) -> float:
    """The most a call may cost, for models priced per million tokens (else 0).

    Reserving it keeps concurrent calls from overrunning a cost limit.
    """
    per_prompt = float(getattr(model, "price_prompt_per_mtok", 0.0) or 0.0)
    per_completion = float(getattr(model, "price_completion_per_mtok", 0.0) or 0.0)
    return (prompt_tokens * per_prompt + completion_tokens * per_completion) / 1e6


def _content(request: ModelRequest, completion: Completion) -> dict[str, object]:
    """The prompt and the answer, for a trace that records content (`Trace.record_content`)."""
    return {
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "text": completion.text,
    }


def _with_one_call(usage: Usage) -> Usage:
    return usage + Usage(calls=1)
