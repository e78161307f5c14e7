"""Executors: where trials run. `local` (default) runs them here, one after another;
`ray` sends each as a Ray task (local Ray by default, or a cluster by address).

Both call the same `run_trial` on the same plain-data spec, so results are the same;
only wall time and the order in which trials finish differ. Ray is imported only by
the Ray executor.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from guardsearch.core.errors import ConfigError
from guardsearch.core.events import Subscriber
from guardsearch.experiments.trial import TrialResult, TrialSpec, run_trial, run_trial_blocking

OnResult = Callable[[TrialResult, list[dict[str, Any]]], None]
# Called as a trial starts, where it runs; returns a subscriber for its events (or None).
OnStart = Callable[[TrialSpec], Subscriber | None]


class Executor(Protocol):
    name: str

    def run(
        self, specs: Sequence[TrialSpec], on_result: OnResult, on_start: OnStart | None = None
    ) -> None:
        """Run every spec; call `on_result` as each trial finishes (in this process) and,
        if the executor can, `on_start` as each begins (its subscriber then sees the
        trial's events as they happen)."""
        ...


class LocalExecutor:
    """Trials one after another in this process (the embedded model uses every core)."""

    name = "local"

    def run(
        self, specs: Sequence[TrialSpec], on_result: OnResult, on_start: OnStart | None = None
    ) -> None:
        async def all_trials() -> None:
            for spec in specs:
                watch = on_start(spec) if on_start is not None else None
                result, events = await run_trial(spec, watch)
                on_result(result, events)

        asyncio.run(all_trials())


class RayExecutor:
    """Each trial is a Ray task; results come back to this process as they finish.

    `address=None` starts (or joins) a local Ray; `"auto"` or `"ray://host:10001"`
    joins a cluster. `in_flight` bounds the tasks submitted at once. On a cluster,
    point `--model` at an OpenAI-compatible server (vLLM): each worker then only
    sends HTTP requests instead of loading weights.
    """

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        num_cpus: int | None = None,
        in_flight: int | None = None,
        init_options: dict[str, Any] | None = None,
    ) -> None:
        self.address = address
        self.num_cpus = num_cpus
        self.in_flight = in_flight
        self.init_options = init_options or {}

    def _ray(self) -> Any:
        try:
            import ray
        except ImportError as exc:
            raise ConfigError("the ray executor needs Ray: pip install 'guardsearch[ray]'") from exc
        if not ray.is_initialized():
            options: dict[str, Any] = {"include_dashboard": False, **self.init_options}
            if self.address is not None:
                options["address"] = self.address
            elif self.num_cpus is not None:
                options["num_cpus"] = self.num_cpus
            ray.init(**options)
        return ray

    def run(
        self, specs: Sequence[TrialSpec], on_result: OnResult, on_start: OnStart | None = None
    ) -> None:
        # `on_start` is not called: a trial's events stay in its worker until it ends
        # (so `bench --store` records Ray trials whole, as they finish).
        if not specs:
            return
        ray = self._ray()
        remote = ray.remote(run_trial_blocking)
        limit = self.in_flight or max(1, int(ray.cluster_resources().get("CPU", 1)))
        queue = [spec.as_dict() for spec in specs]
        running: list[Any] = []
        while queue or running:
            while queue and len(running) < limit:
                running.append(remote.remote(queue.pop(0)))
            done, running = ray.wait(running, num_returns=1)
            for ref in done:
                result, events = ray.get(ref)
                on_result(TrialResult.from_dict(result), events)


def executor_named(name: str, *, address: str | None = None) -> Executor:
    if name == "local":
        if address is not None:
            raise ConfigError("--ray-address needs --executor ray")
        return LocalExecutor()
    if name == "ray":
        return RayExecutor(address)
    raise ConfigError(f"unknown executor {name!r}; use local or ray")
