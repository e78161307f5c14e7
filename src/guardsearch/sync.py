"""Thin sync wrappers over the one async engine (pydantic-ai's run / run_sync)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from guardsearch.core.errors import ConfigError

P = ParamSpec("P")
T = TypeVar("T")


def run_sync(fn: Callable[P, Awaitable[T]]) -> Callable[P, T]:
    """Make a sync twin of an async function (not for use inside a running loop)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(fn(*args, **kwargs))  # type: ignore[arg-type]
        raise ConfigError(
            f"{fn.__name__}_sync called inside a running event loop; await {fn.__name__}() instead"
        )

    wrapper.__name__ = f"{fn.__name__}_sync"
    wrapper.__doc__ = f"Sync version of `{fn.__name__}`. " + (fn.__doc__ or "")
    return wrapper
