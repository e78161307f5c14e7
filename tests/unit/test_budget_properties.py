"""Budget properties: whatever the order of reserve / reconcile / release, limits hold.

Costs are multiples of 1/64 dollar so float sums are exact and the reference ledger
below can use integers.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from guardsearch import (
    Budget,
    BudgetExceeded,
    Completion,
    Message,
    Metered,
    ModelRequest,
    ScriptedModel,
    Usage,
    max_calls,
    max_cost,
    max_tokens,
)
from guardsearch.core.budget import Limit, Reservation

COST_UNIT = 1 / 64  # dollars; every cost here is a whole number of these


@dataclass(frozen=True)
class Limits:
    calls: int | None
    tokens: int | None
    cost64: int | None

    def build(self) -> Limit | None:
        parts: list[Limit] = []
        if self.calls is not None:
            parts.append(max_calls(self.calls))
        if self.tokens is not None:
            parts.append(max_tokens(self.tokens))
        if self.cost64 is not None:
            parts.append(max_cost(self.cost64 * COST_UNIT))
        if not parts:
            return None
        limit = parts[0]
        for part in parts[1:]:
            limit = limit | part
        return limit

    def holds(self, usage: Usage) -> bool:
        return (
            (self.calls is None or usage.calls <= self.calls)
            and (self.tokens is None or usage.total_tokens <= self.tokens)
            and (self.cost64 is None or usage.cost <= self.cost64 * COST_UNIT)
        )


limits_strategy = st.builds(
    Limits,
    calls=st.none() | st.integers(0, 12),
    tokens=st.none() | st.integers(0, 1500),
    cost64=st.none() | st.integers(0, 200),
)


def usage_of(calls: int, prompt: int, completion: int, cost64: int) -> Usage:
    return Usage(
        calls=calls, prompt_tokens=prompt, completion_tokens=completion, cost=cost64 * COST_UNIT
    )


Estimate = tuple[int, int, int, int]  # calls, prompt tokens, completion tokens, cost in 64ths

estimates = st.tuples(
    st.integers(0, 2), st.integers(0, 300), st.integers(0, 300), st.integers(0, 40)
)
# reserve an estimate | reconcile the k-th open reservation using a fraction (per mille)
# of each reserved component | release the k-th open reservation
operations = st.lists(
    st.one_of(
        st.tuples(st.just("reserve"), estimates),
        st.tuples(st.just("reconcile"), st.integers(0, 15), st.integers(0, 1000)),
        st.tuples(st.just("release"), st.integers(0, 15)),
    ),
    max_size=20,
)


@dataclass
class LedgerState:
    """The ledger after one operation; for a reserve, whether it fit and whether it raised."""

    used: Usage
    reserved: Usage
    fits: bool | None = None
    raised: bool | None = None


def _fits(limits: Limits, committed: list[int], est: Estimate) -> bool:
    return (
        (limits.calls is None or committed[0] + est[0] <= limits.calls)
        and (
            limits.tokens is None or committed[1] + committed[2] + est[1] + est[2] <= limits.tokens
        )
        and (limits.cost64 is None or committed[3] + est[3] <= limits.cost64)
    )


def run_ledger(limits: Limits, ops: list[tuple[Any, ...]]) -> list[LedgerState]:
    """Apply `ops` to a Budget and to a reference ledger; actual never exceeds reserved."""
    budget = Budget(limits.build())
    open_: list[tuple[Reservation, Estimate]] = []
    used = [0, 0, 0, 0]
    reserved = [0, 0, 0, 0]
    steps: list[LedgerState] = []
    for op in ops:
        step = LedgerState(used=budget.used, reserved=budget.reserved)
        if op[0] == "reserve":
            est: Estimate = op[1]
            step.fits = _fits(limits, [u + r for u, r in zip(used, reserved, strict=True)], est)
            try:
                open_.append((budget.reserve(usage_of(*est)), est))
            except BudgetExceeded as exc:
                step.raised = True
                assert exc.usage == budget.used
            else:
                step.raised = False
                reserved = [r + e for r, e in zip(reserved, est, strict=True)]
        elif open_:
            reservation, est = open_.pop(op[1] % len(open_))
            if op[0] == "reconcile":
                actual = [e * op[2] // 1000 for e in est]
                budget.reconcile(reservation, usage_of(*actual))
            else:
                actual = [0, 0, 0, 0]
                budget.release(reservation)
            reserved = [r - e for r, e in zip(reserved, est, strict=True)]
            used = [u + a for u, a in zip(used, actual, strict=True)]
        assert budget.used == usage_of(*used)
        assert budget.reserved == usage_of(*reserved)
        step.used, step.reserved = budget.used, budget.reserved
        steps.append(step)
    return steps


@settings(max_examples=1000, deadline=None)
@given(limits=limits_strategy, ops=operations)
def test_no_sequence_of_reserve_reconcile_release_overruns_a_limit(
    limits: Limits, ops: list[tuple[Any, ...]]
) -> None:
    """Neither used nor used + reserved ever exceeds a limit, because reserve raises
    exactly when an estimate would not fit (and reconciled usage never exceeds it)."""
    for step in run_ledger(limits, ops):
        assert limits.holds(step.used)
        assert limits.holds(step.used + step.reserved)
        if step.fits is not None:
            assert step.raised is not step.fits


async def _metered_call(
    messages: list[str], answer: str, wanted: int, token_limit: int | None
) -> Metered:
    model = ScriptedModel([answer])
    budget = Budget(max_tokens(token_limit) if token_limit is not None else None)
    metered = Metered(model, budget)
    request = ModelRequest(messages=tuple(Message("user", m) for m in messages), max_tokens=wanted)
    try:
        await metered.complete(request)
    except BudgetExceeded:
        assert model.calls == 0
    return metered


@settings(max_examples=300, deadline=None)
@given(
    messages=st.lists(st.text(max_size=200), min_size=1, max_size=3),
    answer=st.text(max_size=400),
    wanted=st.integers(1, 120),
    token_limit=st.none() | st.integers(0, 300),
)
def test_metered_reservations_for_a_scripted_model_cover_the_actual_usage(
    messages: list[str], answer: str, wanted: int, token_limit: int | None
) -> None:
    metered = asyncio.run(_metered_call(messages, answer, wanted, token_limit))
    budget = metered.budget
    assert budget.overrun == Usage()
    assert budget.reserved == Usage()
    for reserve, call in zip(
        metered.trace.of_kind("budget_reserve"), metered.trace.of_kind("model_call"), strict=True
    ):
        assert call.data["prompt_tokens"] <= reserve.data["prompt_tokens"]
        assert call.data["completion_tokens"] <= reserve.data["completion_tokens"]
    if token_limit is not None:
        assert budget.used.total_tokens <= token_limit


PRICE_UNIT = 1e6 * COST_UNIT  # per million tokens: one token costs a whole 64th


@dataclass
class PricedModel:
    """A scripted, priced model that yields to other calls mid-answer and checks the
    ledger at every interleaving point (prompt tokens counted exactly, like a backend)."""

    budget: Budget
    limits: Limits
    price_prompt_per_mtok: float
    price_completion_per_mtok: float
    answers: dict[str, tuple[int, int]]  # prompt text -> (answer words, yields)
    name: str = "priced"
    calls: int = 0

    def count_tokens(self, request: ModelRequest) -> int:
        return sum(len(m.content.split()) for m in request.messages)

    async def complete(self, request: ModelRequest) -> Completion:
        words, yields = self.answers[request.messages[0].content]
        for _ in range(yields + 1):
            assert self.limits.holds(self.budget.used + self.budget.reserved)
            await asyncio.sleep(0)
        self.calls += 1
        prompt = self.count_tokens(request)
        completion = min(words, request.max_tokens)
        return Completion(
            text="w " * completion,
            usage=Usage(
                calls=1,
                prompt_tokens=prompt,
                completion_tokens=completion,
                cost=(
                    prompt * self.price_prompt_per_mtok
                    + completion * self.price_completion_per_mtok
                )
                / 1e6,
            ),
        )


# prompt words, wanted completion tokens, answer words, how often the call yields
calls_strategy = st.lists(
    st.tuples(st.integers(1, 40), st.integers(1, 80), st.integers(0, 120), st.integers(0, 3)),
    min_size=1,
    max_size=10,
)


async def _concurrent(
    limits: Limits,
    calls: list[tuple[int, int, int, int]],
    concurrency: int,
    prices: tuple[int, int],
) -> tuple[Budget, PricedModel, int, int]:
    budget = Budget(limits.build())
    answers = {
        f"call{i} " + "x " * (prompt - 1): (words, yields)
        for i, (prompt, _, words, yields) in enumerate(calls)
    }
    model = PricedModel(budget, limits, prices[0] * PRICE_UNIT, prices[1] * PRICE_UNIT, answers)
    metered = Metered(model, budget)
    gate = asyncio.Semaphore(concurrency)
    done = refused = 0

    async def one(text: str, wanted: int) -> None:
        nonlocal done, refused
        async with gate:
            request = ModelRequest(messages=(Message("user", text),), max_tokens=wanted)
            try:
                await metered.complete(request)
                done += 1
            except BudgetExceeded:
                refused += 1

    await asyncio.gather(*(one(t, c[1]) for t, c in zip(answers, calls, strict=True)))
    return budget, model, done, refused


@settings(max_examples=1000, deadline=None)
@given(
    limits=limits_strategy,
    calls=calls_strategy,
    concurrency=st.integers(1, 8),
    prices=st.tuples(st.integers(0, 2), st.integers(0, 2)),
)
def test_concurrent_calls_of_random_sizes_never_overrun_any_limit(
    limits: Limits,
    calls: list[tuple[int, int, int, int]],
    concurrency: int,
    prices: tuple[int, int],
) -> None:
    """Calls run concurrently (up to `concurrency` at once, yielding mid-call); at every
    interleaving point used + reserved is within every limit (calls, tokens, cost),
    and at the end every reservation is reconciled with nothing overrun."""
    budget, model, done, refused = asyncio.run(_concurrent(limits, calls, concurrency, prices))
    assert done + refused == len(calls)
    assert model.calls == done == budget.used.calls  # a refused call never reached the model
    assert limits.holds(budget.used)
    assert budget.reserved == Usage() and budget.open_reservations == 0
    assert budget.overrun == Usage()


@dataclass
class WorstCaseBPEModel:
    """A backend without `count_tokens` (like OpenAIModel) whose tokenizer is the worst a
    byte-level BPE can be: one token per UTF-8 byte, plus ChatML's 5 template tokens per
    message and 3 for the reply primer. It honours `max_tokens`, one token per byte."""

    answer: str
    name: str = "bpe-worst-case"
    calls: int = 0

    async def complete(self, request: ModelRequest) -> Completion:
        self.calls += 1
        prompt = sum(len(m.content.encode("utf-8")) for m in request.messages)
        prompt += 5 * len(request.messages) + 3
        completion = min(request.max_tokens, len(self.answer.encode("utf-8")))
        return Completion(
            text=self.answer,
            usage=Usage(calls=1, prompt_tokens=prompt, completion_tokens=completion),
        )


def naive_estimate(request: ModelRequest) -> int:
    """The old estimate: chars / 3 plus 8 per message (too low for CJK, emoji, code)."""
    chars = sum(len(m.content) for m in request.messages)
    return chars // 3 + 1 + 8 * len(request.messages)


CJK_AND_MORE = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF) | st.characters(
    codec="utf-8"
)


async def _worst_case_call(
    messages: list[str], answer: str, wanted: int, token_limit: int
) -> tuple[Metered, int]:
    model = WorstCaseBPEModel(answer)
    metered = Metered(model, Budget(max_tokens(token_limit)))
    request = ModelRequest(messages=tuple(Message("user", m) for m in messages), max_tokens=wanted)
    try:
        await metered.complete(request)
    except BudgetExceeded:
        assert model.calls == 0
    return metered, naive_estimate(request)


@settings(max_examples=300, deadline=None)
@given(
    messages=st.lists(st.text(CJK_AND_MORE, min_size=8, max_size=400), min_size=1, max_size=3),
    answer=st.text(CJK_AND_MORE, max_size=400),
    wanted=st.integers(1, 600),
    token_limit=st.integers(0, 3000),
)
def test_a_token_limit_holds_when_actual_prompt_tokens_exceed_a_naive_estimate(
    messages: list[str], answer: str, wanted: int, token_limit: int
) -> None:
    """A backend that cannot count tokens reports more prompt tokens than chars / 3
    would predict; the byte bound still reserves enough, so the limit holds."""
    metered, naive = asyncio.run(_worst_case_call(messages, answer, wanted, token_limit))
    budget = metered.budget
    assert budget.used.total_tokens <= token_limit
    assert budget.overrun == Usage() and budget.reserved == Usage()
    for reserve, call in zip(
        metered.trace.of_kind("budget_reserve"), metered.trace.of_kind("model_call"), strict=True
    ):
        assert naive < call.data["prompt_tokens"] <= reserve.data["prompt_tokens"]


def test_six_hundred_cjk_characters_cannot_overrun_a_thousand_token_limit() -> None:
    # The audited case: chars / 3 reserved ~209 prompt tokens for ~1,800.
    metered, _ = asyncio.run(_worst_case_call(["中" * 600], "好" * 1000, 1000, 1000))
    assert metered.budget.used.total_tokens <= 1000
    assert metered.budget.overrun == Usage()
