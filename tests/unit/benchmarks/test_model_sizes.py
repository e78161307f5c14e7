"""The Game of 24 size table pairs the models on the puzzles every one of them has."""

from __future__ import annotations

import json
from pathlib import Path

from model_sizes import markdown, summarize


def row(label: str, problem: int, solved: bool, calls: int = 10) -> dict[str, object]:
    ladder = {"small": {"calls": calls - 2, "seconds": 4.0, "escalations": 0},
              "large": {"calls": 2, "seconds": 6.0, "escalations": 2}}  # fmt: skip
    return {
        "label": label, "problem": f"{problem:04d}", "calls_cap": 60, "succeeded": solved,
        "calls": calls, "seconds": 20.0, "model_seconds": 10.0, "peak_rss_mb": 800.0,
        "models": ladder if label == "ladder" else {},
    }  # fmt: skip


def table(tmp_path: Path, rows: list[dict[str, object]]) -> dict[str, object]:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return summarize(path, (900, 904, 1), 60)


def test_only_puzzles_every_model_has_are_paired(tmp_path: Path) -> None:
    rows = [row(label, p, solved=True) for p in (900, 901, 902) for label in ("0.5b", "1.5b")]
    rows += [row("ladder", p, solved=p != 901) for p in (900, 901)]  # cut short at 902
    rows += [row("0.5b", 903, solved=False)]
    card = table(tmp_path, rows)
    models = card["models"]
    assert isinstance(models, dict)
    assert {label: m["problems"] for label, m in models.items()} == {
        label: ["0900", "0901"] for label in ("0.5b", "1.5b", "ladder")
    }
    ladder = models["ladder"]
    assert ladder["successes"] == 1 and ladder["vs_0.5b"]["delta"] == -0.5
    assert ladder["per_model"]["large"] == {"calls": 4, "seconds": 12.0, "escalations": 4}
    assert models["1.5b"]["vs_0.5b"]["delta"] == 0.0
    assert models["0.5b"]["seconds_per_solved"] == 20.0 and "vs_0.5b" not in models["0.5b"]
    text = markdown(card, "cmd")
    assert "2 measured for every model so far" in text
    assert "| ladder | `ladder:embedded,embedded:1.5b?after=2` | 1/2 | 50% [" in text


def test_a_full_table_says_so(tmp_path: Path) -> None:
    labels = ("0.5b", "1.5b", "ladder")
    card = table(tmp_path, [row(label, p, True) for p in range(900, 904) for label in labels])
    text = markdown(card, "cmd")
    assert "(4 puzzles; each measured on every model)" in text and "so far" not in text
