"""Every result benchmarks/README.md names is in benchmarks/results (issue 31).

The README's tables say which file makes each quoted figure; a row that names a file
that is gone (deleted, renamed, never committed) would send a reader nowhere. The
result column holds backticked names: a file (`startup.md`), a run directory
(`game24_run/`), a glob (`plan_steer*_run/summary.md`), or a bare suffix (`.json`) that means
the previous name with that ending (`model_sizes.md`, `.json`).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "benchmarks" / "README.md"
RESULTS = ROOT / "benchmarks" / "results"


def named_results(text: str) -> list[str]:
    """The names in the result column (the second) of every table row, suffixes
    expanded against the name before them."""
    names: list[str] = []
    for line in text.splitlines():
        cells = line.split(" | ")
        if not line.startswith("|") or len(cells) < 3 or set(cells[1]) <= set("-| "):
            continue
        last = ""
        for name in re.findall(r"`([^`]+)`", cells[1]):
            if name.startswith("."):
                if not last:
                    raise ValueError(f"a bare suffix with no name before it: {line}")
                name = re.sub(r"(\.[a-z]+)+$", "", last) + name
            elif " " in name:
                continue  # a command, not a name
            last = name
            names.append(name)
    return names


def missing(names: list[str], results: Path) -> list[str]:
    return [n for n in names if not any(results.glob(n.rstrip("/")))]


def test_every_result_the_readme_names_exists() -> None:
    names = named_results(README.read_text(encoding="utf-8"))
    assert len(names) > 40  # the table was read, not skipped
    assert missing(names, RESULTS) == []


def test_the_index_check_sees_a_missing_file_a_suffix_and_a_glob(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "trials.jsonl").write_text("")
    for name in ("a.md", "a.json", "fresh_1.md"):
        (tmp_path / name).write_text("")
    text = (
        "| figure | result | command |\n"
        "|---|---|---|\n"
        "| x (docs/x.md) | `a.md`, `.json`, `.jsonl.gz`, `run/`, `fresh*.md` | `python3 x.py` |\n"
        "| y | `gone.md`; inputs `run/trials.jsonl` | `python3 y.py --out z` |\n"
    )
    names = named_results(text)
    assert names == [
        "a.md",
        "a.json",
        "a.jsonl.gz",
        "run/",
        "fresh*.md",
        "gone.md",
        "run/trials.jsonl",
    ]
    assert missing(names, tmp_path) == ["a.jsonl.gz", "gone.md"]


def test_the_committed_results_stay_within_120_files() -> None:
    """Issue 31: at most 120 tracked files under benchmarks/results (227 before it).
    A new figure folds older detail away (benchmarks/README.md says how)."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "benchmarks/results"],
        capture_output=True,
        text=True,
        check=False,
    )
    if listed.returncode != 0:
        pytest.skip(f"not a git checkout: {listed.stderr.strip()}")
    tracked = listed.stdout.split()
    assert len(tracked) > 40  # the listing was read
    assert len(tracked) <= 120, f"{len(tracked)} files under benchmarks/results"
