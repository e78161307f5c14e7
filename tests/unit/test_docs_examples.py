"""Every Python example in docs/api.md and in the README's Python API section runs as it
is written, and prints what its comments say (`print(x)  # expected output`).

The examples use scripted models, and the loop families read the offline corpus, which
is indexed once for this module in a home of its own.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guardsearch.corpus import open_index

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"```python\n(.*?)```", re.S)
EXPECTED = re.compile(r"^print\(.*\)\s+#\s+(.+)$")


def section(text: str, heading: str) -> str:
    """The text under `heading` up to the next heading of the same level."""
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end != -1 else None]


def examples() -> list[Any]:
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    readme = section((ROOT / "README.md").read_text(encoding="utf-8"), "## Python API")
    found = [("docs/api.md", i, code) for i, code in enumerate(FENCE.findall(api))]
    found += [("README.md", i, code) for i, code in enumerate(FENCE.findall(readme))]
    return [pytest.param(code, id=f"{name}#{i}") for name, i, code in found]


def test_there_is_an_example_per_family_and_one_in_the_readme() -> None:
    codes = [p.values[0] for p in examples()]
    entries = ("run_search_sync", "run_app_sync", "run_research_sync", "run_review_sync")
    for entry in (*entries, "run_probe_sync", "run_step_sync"):
        assert any(entry in code for code in codes), entry
    assert any(p.id.startswith("README.md") for p in examples())


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    where = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GUARDSEARCH_HOME", str(where))
        open_index()  # the offline corpus, indexed once (about a second)
        yield where


@pytest.mark.parametrize("code", examples())
def test_the_example_runs_and_prints_what_it_says(code: str, home: Path) -> None:
    printed: dict[int, str] = {}

    def record(*args: Any, **_: Any) -> None:
        printed[sys._getframe(1).f_lineno] = " ".join(str(a) for a in args)

    exec(compile(code, "<example>", "exec"), {"__name__": "__example__", "print": record})
    expected = {
        number: match.group(1)
        for number, line in enumerate(code.splitlines(), 1)
        if (match := EXPECTED.match(line))
    }
    assert expected, "an example says what it prints"
    assert {n: printed.get(n) for n in expected} == expected


def test_the_readme_lists_the_entry_points_as_they_are() -> None:
    import inspect

    import guardsearch

    readme = section((ROOT / "README.md").read_text(encoding="utf-8"), "## Python API")
    table = readme.split("```text\n", 1)[1].split("```", 1)[0]
    listed = re.findall(r"^(run_\w+)\((.*?)\)\s+->\s+(\w+)", table, re.M)
    assert [name for name, _, _ in listed] == [
        "run_search",
        "run_app",
        "run_research",
        "run_review",
        "run_probe",
    ]
    for name, params, returns in listed:
        entry = getattr(guardsearch, name)
        assert callable(getattr(guardsearch, f"{name}_sync")), name
        signature = inspect.signature(entry)
        keywords = [p.strip().rstrip("=") for p in params.split(",") if p.strip().endswith("=")]
        assert keywords == ["model", "budget", "trace", "config"], name
        for keyword in keywords:
            assert signature.parameters[keyword].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert signature.return_annotation == returns, name
        assert issubclass(getattr(guardsearch, returns), guardsearch.Outcome), returns
