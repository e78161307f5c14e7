"""The research row of the size table pairs reports by question."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from research_models import load, table


def report(path: Path, model: str, correct: list[bool]) -> Path:
    rows = [
        {"question": f"q{i}", "correct": ok, "calls": 3, "tokens": 100, "seconds": 2.0,
         "synthesize_steering": {"outputs": 2, "repeats": 1, "repairs": 0}}
        for i, ok in enumerate(correct)
    ]  # fmt: skip
    path.write_text(json.dumps({"model": model, "rows": rows}))
    return path


def test_models_are_paired_on_the_questions_all_answered(tmp_path: Path) -> None:
    small = load(report(tmp_path / "a.json", "embedded", [True, False, False, True]))
    large = load(report(tmp_path / "b.json", "embedded:1.5b", [True, True, True]))
    text = table({"0.5b": small, "1.5b": large})
    assert "Paired on 3 questions" in text  # q3 is not in the second report
    assert "| 0.5b | `embedded` | 1/3 |" in text
    assert "| 1.5b | `embedded:1.5b` | 3/3 | 100% [44%, 100%] | +66.7 [" in text
    assert "| 3.00 | 100 | 2.0 | 6 / 3 / 0 |" in text


def test_reports_without_shared_questions_are_an_error(tmp_path: Path) -> None:
    a = load(report(tmp_path / "a.json", "embedded", [True]))
    b = load(report(tmp_path / "b.json", "embedded", []))
    with pytest.raises(SystemExit, match="share no question"):
        table({"a": a, "b": b})
