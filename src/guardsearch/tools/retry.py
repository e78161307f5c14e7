"""Tier 1: retry transient search errors with exponential backoff and jitter (tenacity).

The wait before retry n (n = 1, 2, ...) is `min(base * 2**(n-1) + uniform(0, 1), max_wait)`
(by default `min(2**(n-1) + uniform(0, 1), 10)` seconds): the exponential part spreads
retries out, the jitter keeps many clients from retrying in lock-step. Only
`TransientSearchError` (including a per-call timeout) is retried.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from guardsearch.core.source import Source
from guardsearch.tools.base import SearchProvider, TransientSearchError

Sleep = Callable[[float], Awaitable[None]]
OnRetry = Callable[[int, BaseException, float], None]


@dataclass(frozen=True)
class Backoff:
    """The wait policy as a tenacity `wait` callable."""

    base_s: float = 1.0
    max_wait_s: float = 10.0
    rng: random.Random = field(default_factory=random.Random, compare=False)

    def __call__(self, state: RetryCallState) -> float:
        exponential = self.base_s * 2 ** (state.attempt_number - 1)
        return float(min(exponential + self.rng.uniform(0, 1), self.max_wait_s))


async def search_with_retry(
    provider: SearchProvider,
    query: str,
    k: int,
    *,
    attempts: int = 3,
    timeout_s: float = 10.0,
    backoff: Backoff | None = None,
    sleep: Sleep = asyncio.sleep,
    on_retry: OnRetry | None = None,
) -> list[Source]:
    """`provider.search(query, k)` with up to `attempts` tries on transient errors."""

    async def once() -> list[Source]:
        try:
            async with asyncio.timeout(timeout_s):
                return await provider.search(query, k)
        except TimeoutError as exc:
            raise TransientSearchError(f"{provider.name}: timed out after {timeout_s}s") from exc

    def before_sleep(state: RetryCallState) -> None:
        if on_retry is not None and state.outcome is not None and state.next_action is not None:
            error = state.outcome.exception()
            assert error is not None
            on_retry(state.attempt_number, error, state.next_action.sleep)

    retrying = AsyncRetrying(
        stop=stop_after_attempt(max(1, attempts)),
        wait=backoff or Backoff(),
        retry=retry_if_exception_type(TransientSearchError),
        sleep=sleep,
        before_sleep=before_sleep,
        reraise=True,
    )
    result: list[Source] = await retrying(once)
    return result
