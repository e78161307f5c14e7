"""A live status on the terminal while a command runs (rich), fed by the run's events.

    with live_status(events, "solve game24", budget=budget, quiet=quiet, as_json=as_json):
        ...run...

Shows the calls and tokens spent against the budget, the nodes expanded and judged
(passed / rejected), the best verdict so far and the last one. `bench_progress` is the
bench's: a bar per method with elapsed time and ETA beside the per-trial lines.

Neither shows anything with `--json`, `--quiet`, or when stderr is not a terminal:
scripts, pipes and CI logs get exactly the lines they got before.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from guardsearch.cli.output import err
from guardsearch.core.budget import Budget
from guardsearch.core.events import Event, Trace

_CAP = re.compile(r"max_(calls|tokens)\((\d+)\)")
FEEDBACK_CHARS = 120


def shows_live(console: Console, *, quiet: bool, as_json: bool) -> bool:
    """Whether a live display may be drawn: a terminal, and neither --quiet nor --json."""
    return console.is_terminal and not quiet and not as_json


@dataclass
class RunStatus:
    """What the status shows, kept up to date from the events (a Trace subscriber)."""

    title: str
    calls_cap: int | None = None
    tokens_cap: int | None = None
    calls: int = 0
    tokens: int = 0
    expanded: int = 0
    judged: int = 0
    passed: int = 0
    best: tuple[float, str, str] | None = None  # score, node, guard
    last: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def of(cls, title: str, budget: Budget | None) -> RunStatus:
        caps = budget.allowance if budget is not None else None
        return cls(
            title=title,
            calls_cap=caps.calls if caps is not None else None,
            tokens_cap=caps.tokens if caps is not None else None,
        )

    def __call__(self, event: Event) -> None:
        d = event.data
        if event.kind == "model_call":
            self.calls += 1
            self.tokens += int(d.get("prompt_tokens") or 0) + int(d.get("completion_tokens") or 0)
        elif event.kind == "expansion" and d.get("phase") == "end":
            self.expanded += 1
        elif event.kind == "guard_verdict":
            self.judged += 1
            self.passed += bool(d.get("passed"))
            self.last = {**d, "node": event.node, "step": event.step}
            score = d.get("score")
            better = self.best is None or (isinstance(score, int | float) and score > self.best[0])
            if d.get("passed") and isinstance(score, int | float) and better:
                self.best = (float(score), event.node, str(d.get("guard") or ""))
        elif event.kind == "run_start" and isinstance(d.get("budget"), str):
            # a durable run's budget comes from its spec: read the caps it reports
            for kind, value in _CAP.findall(d["budget"]):
                if kind == "calls" and self.calls_cap is None:
                    self.calls_cap = int(value)
                elif kind == "tokens" and self.tokens_cap is None:
                    self.tokens_cap = int(value)

    def lines(self) -> list[str]:
        """The status as plain lines (what the panel shows, without colour)."""

        def against(used: int, cap: int | None) -> str:
            return f"{used:,}" if cap is None else f"{used:,} / {cap:,} ({100 * used / cap:.0f}%)"

        elapsed = time.monotonic() - self.started
        rejected = self.judged - self.passed
        out = [
            f"{self.title} · {elapsed:.0f}s",
            f"calls {against(self.calls, self.calls_cap)} · "
            f"tokens {against(self.tokens, self.tokens_cap)}",
            f"nodes expanded {self.expanded} · judged {self.judged} "
            f"({self.passed} passed, {rejected} rejected)",
        ]
        if self.best is not None:
            top, node, guard = self.best
            out.append(f"best {top:.2f} at {node or '—'} ({guard})")
        if self.last:
            verdict = "passed" if self.last.get("passed") else "rejected"
            last_score = self.last.get("score")
            shown = f" {last_score:.2f}" if isinstance(last_score, int | float) else ""
            feedback = " ".join(str(self.last.get("feedback") or "").split())
            if len(feedback) > FEEDBACK_CHARS:
                feedback = feedback[: FEEDBACK_CHARS - 1] + "…"
            where = self.last.get("node") or self.last.get("step") or ""
            out.append(
                f"last {self.last.get('guard') or 'guard'} {verdict}{shown} at {where}"
                + (f": {feedback}" if feedback else "")
            )
        return out

    def __rich__(self) -> RenderableType:
        head, *rest = self.lines()
        return Group(Text(head, style="bold"), *(Text(line, style="dim") for line in rest))


@contextmanager
def live_status(
    events: Trace,
    title: str,
    *,
    budget: Budget | None = None,
    quiet: bool = False,
    as_json: bool = False,
    console: Console | None = None,
) -> Iterator[RunStatus | None]:
    """Draw a live RunStatus of `events` on stderr while the block runs (when allowed:
    see `shows_live`); yields the status, or None when nothing is drawn."""
    console = console or err
    if not shows_live(console, quiet=quiet, as_json=as_json):
        yield None
        return
    status = RunStatus.of(title, budget)
    events.subscribe(status)
    with Live(status, console=console, refresh_per_second=4, transient=True):
        yield status
    console.print(Text("  ".join(status.lines()[1:3]), style="dim"))


class BenchProgress:
    """A progress bar per method (done / total, elapsed, ETA) for a bench's trials."""

    def __init__(self, methods: Sequence[str], console: Console) -> None:
        self.progress = Progress(
            TextColumn("{task.description:<14}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.tasks: dict[str, TaskID] = {}
        totals: dict[str, int] = {}
        for method in methods:
            totals[method] = totals.get(method, 0) + 1
        for method, total in totals.items():
            # a bar starts when its method's trials do, so its ETA is its own
            self.tasks[method] = self.progress.add_task(method, total=total, start=False)

    def finished(self, method: str) -> None:
        """One trial of `method` finished; when its bar is full, the next bar starts."""
        task = self.tasks.get(method)
        if task is None:
            return
        self.progress.start_task(task)
        self.progress.advance(task)
        if self.progress.tasks[task].finished:
            waiting = [t for t in self.tasks.values() if not self.progress.tasks[t].started]
            if waiting:
                self.progress.start_task(waiting[0])


@contextmanager
def bench_progress(
    methods: Sequence[str], *, quiet: bool, as_json: bool, console: Console | None = None
) -> Iterator[BenchProgress | None]:
    """Bars for the pending trials' methods (one entry per trial) while the block runs,
    or None (no terminal, --quiet, --json)."""
    console = console or err
    if not methods or not shows_live(console, quiet=quiet, as_json=as_json):
        yield None
        return
    bars = BenchProgress(methods, console)
    first = bars.tasks[methods[0]]
    bars.progress.start_task(first)
    with bars.progress:
        yield bars
