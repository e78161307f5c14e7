"""The dual-layer timeline: outer planner calls and inner probe steps.

Built from the run's `phase` events (step "inner_outer"; the kernel's fixed `phase`
and `t`, and the `layer`); drawn as a PNG with
matplotlib on request: the top panel shows the outer layer's calls (plan, replan,
evaluate) over time, the bottom panel the inner layer's hit count per step on a log
scale, with the adaptive band (lo..hi) shaded, its EMA, and memo-only steps marked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guardsearch.core.errors import ConfigError
from guardsearch.core.events import Trace
from guardsearch.kernel import FIXED_FIELDS

# The kernel's fixed fields and the layer are the entry's own fields, not its data.
_NOT_DATA = frozenset({*FIXED_FIELDS, "layer"})


@dataclass(frozen=True, kw_only=True)
class TimelineEntry:
    layer: str
    phase: str
    t: float
    data: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"layer": self.layer, "phase": self.phase, "t": self.t, **self.data}


@dataclass(frozen=True)
class Timeline:
    entries: tuple[TimelineEntry, ...]

    @classmethod
    def from_trace(cls, trace: Trace) -> Timeline:
        entries = []
        for event in trace.of_kind("phase"):
            if event.step != "inner_outer":
                continue
            data = {k: v for k, v in event.data.items() if k not in _NOT_DATA}
            entries.append(
                TimelineEntry(
                    layer=str(event.data.get("layer", "")),
                    phase=str(event.data.get("phase", "")),
                    t=float(event.data.get("t", 0.0)),
                    data=data,
                )
            )
        return cls(tuple(entries))

    def layer(self, name: str) -> list[TimelineEntry]:
        return [e for e in self.entries if e.layer == name]

    @property
    def inner_steps(self) -> list[TimelineEntry]:
        return [e for e in self.entries if e.layer == "inner" and e.phase == "step"]

    @property
    def outer_calls(self) -> list[TimelineEntry]:
        return [e for e in self.entries if e.layer == "outer" and e.data.get("status") == "done"]

    def as_list(self) -> list[dict[str, Any]]:
        return [e.as_dict() for e in self.entries]


def draw_timeline(timeline: Timeline, path: str | Path, *, title: str = "") -> Path:
    """Draw both layers into a PNG at `path` (matplotlib, headless)."""
    target = Path(path)
    if target.suffix.lower() != ".png":
        raise ConfigError(f"the timeline is drawn as a PNG; give a .png path, not {target}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (outer_ax, inner_ax) = plt.subplots(
        2, 1, figsize=(9, 5.5), sharex=True, gridspec_kw={"height_ratios": [1, 2.4]}
    )
    try:
        colours = {"plan": "tab:blue", "replan": "tab:orange", "evaluate": "tab:green"}
        for entry in timeline.outer_calls:
            outer_ax.axvline(entry.t, color=colours.get(entry.phase, "grey"), lw=2)
            outer_ax.annotate(
                entry.phase, (entry.t, 0.5), rotation=90, va="center", ha="right", fontsize=8
            )
        for entry in timeline.layer("outer"):
            if entry.phase == "replan_triggered":
                outer_ax.plot(entry.t, 0.2, "v", color="tab:red")
        outer_ax.set_yticks([])
        outer_ax.set_ylabel("outer\n(model)")
        outer_ax.set_title(title or "inner/outer loop timeline")

        steps = timeline.inner_steps
        if steps:
            ts = [e.t for e in steps]
            counts = [max(1, int(e.data.get("count") or 0)) for e in steps]
            inner_ax.fill_between(
                ts,
                [float(e.data.get("lo", 1)) for e in steps],
                [float(e.data.get("hi", 1)) for e in steps],
                step="post",
                alpha=0.2,
                color="tab:green",
                label="band",
            )
            inner_ax.plot(ts, counts, "o-", color="tab:blue", label="hits (chosen query)")
            emas = [e.data.get("ema") for e in steps]
            if all(v is not None for v in emas):
                inner_ax.plot(ts, emas, "--", color="tab:purple", label="EMA")
            memo_only = [e for e in steps if all(e.data.get("memo") or [False])]
            if memo_only:
                inner_ax.plot(
                    [e.t for e in memo_only],
                    [max(1, int(e.data.get("count") or 0)) for e in memo_only],
                    "s",
                    mfc="none",
                    color="black",
                    label="memo only",
                )
            inner_ax.set_yscale("log")
            inner_ax.legend(fontsize=8, loc="best")
        for entry in timeline.layer("inner"):
            if entry.phase == "stop":
                inner_ax.axvline(entry.t, color="grey", ls=":", lw=1)
                inner_ax.annotate(
                    str(entry.data.get("reason", "")), (entry.t, 1), fontsize=7, rotation=90
                )
        inner_ax.set_ylabel("inner\n(hits per step)")
        inner_ax.set_xlabel("seconds")
        fig.tight_layout()
        target.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(target, dpi=110)
    except OSError as exc:
        raise ConfigError(f"cannot write timeline {target}: {exc.strerror}") from exc
    finally:
        plt.close(fig)
    return target
