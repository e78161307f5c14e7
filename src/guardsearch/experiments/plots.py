"""PNG plots of a scorecard (matplotlib, no display needed)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_pass_rate(card: Mapping[str, Any], path: Path) -> None:
    """Pass rate vs call budget, one line per method, Wilson 95% intervals as bars."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    methods = list(card["methods"].items())
    budgets = card.get("budgets") or [1]
    # Dodge the methods sideways a little so equal rates do not hide each other's bars.
    dodge = (max(budgets) - min(budgets) or 1) * 0.012
    for i, (label, m) in enumerate(methods):
        curve = m["curve"]
        if not curve:
            continue
        xs = [p["budget"] + (i - (len(methods) - 1) / 2) * dodge for p in curve]
        ys = [100 * p["success_rate"] for p in curve]
        low = [100 * (p["success_rate"] - p["ci_low"]) for p in curve]
        high = [100 * (p["ci_high"] - p["success_rate"]) for p in curve]
        ax.errorbar(xs, ys, yerr=[low, high], marker="o", capsize=3, label=label)
    ax.set_xlabel("budget (model calls per problem)")
    ax.set_ylabel("pass rate (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"{card.get('name', '')}: pass rate vs budget ({card.get('model')})")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_calls(card: Mapping[str, Any], path: Path) -> None:
    """Calls per problem for each method: a box per method (solved and unsolved)."""
    plt = _pyplot()
    labels = list(card["methods"])
    data = [card["methods"][k].get("calls", []) or [0] for k in labels]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    if labels:
        ax.boxplot(data, showmeans=True)
        ax.set_xticks(range(1, len(labels) + 1), labels, rotation=20)
    ax.set_ylabel("model calls per problem")
    ax.set_title(f"{card.get('name', '')}: calls distribution")
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_prefix_reuse(card: Mapping[str, Any], path: Path) -> None:
    """Prompt tokens per problem: naive (whole prompt every call) vs actually evaluated."""
    plt = _pyplot()
    labels = list(card["methods"])
    naive, evaluated = [], []
    for label in labels:
        m = card["methods"][label]
        n = max(m["n"], 1)
        naive.append(m["prefix_reuse"]["prompt_tokens"] / n)
        evaluated.append(m["prefix_reuse"]["evaluated_prompt_tokens"] / n)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    xs = range(len(labels))
    ax.bar([x - 0.2 for x in xs], naive, width=0.4, label="naive (whole prompt each call)")
    ax.bar([x + 0.2 for x in xs], evaluated, width=0.4, label="evaluated (KV-cache prefix reused)")
    ax.set_xticks(list(xs), labels, rotation=20)
    ax.set_ylabel("prompt tokens per problem")
    ax.set_title(f"{card.get('name', '')}: prefix reuse")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
