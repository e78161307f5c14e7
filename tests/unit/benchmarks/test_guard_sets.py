"""The labelled guard sets and the second research evaluation set: built the same way
every time from the seed, balanced, split without overlap, and committed as built."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import build_sets
import pytest
from guardbench import find_cases, game24_cases, plan_cases
from guardbench.cases import GUARD_SETS, read_cases, read_jsonl
from guardbench.registry import GUARDS
from guardbench.research_questions import build

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    "builder",
    [
        find_cases.type_cases,
        find_cases.evidence_cases,
        plan_cases.recon_cases,
        game24_cases.step_cases,
        game24_cases.final_cases,
        lambda: plan_cases.plan_guard_cases("expansive"),
    ],
)
def test_a_builder_gives_the_same_cases_twice(builder) -> None:  # type: ignore[no-untyped-def]
    first, second = builder(), builder()
    assert first == second
    assert len({c.id for c in first}) == len(first)


def test_the_research_questions_are_deterministic_and_split_by_seed() -> None:
    first = build()
    assert first == build()
    assert first != build(seed=17)
    assert len(first) >= 100
    kinds = Counter((q.kind, q.split) for q in first)
    assert kinds[("description", "tune")] == kinds[("description", "heldout")] >= 25
    assert kinds[("fact", "tune")] == kinds[("fact", "heldout")] >= 25
    tune = {q.article for q in first if q.split == "tune"}
    held = {q.article for q in first if q.split == "heldout"}
    assert not tune & held
    assert len({q.article for q in first}) == len(first)


def test_every_code_guard_has_a_balanced_committed_set() -> None:
    for spec in GUARDS:
        if spec.cases_of:
            assert (GUARD_SETS / f"{spec.cases_of}.jsonl").is_file()
            continue
        cases = read_cases(GUARD_SETS / f"{spec.name}.jsonl")
        labels = Counter(c.label for c in cases)
        assert labels["pass"] == labels["fail"] >= 25, spec.name
        assert len(cases) >= 50, spec.name
        tune = {c.id for c in cases if c.split == "tune"}
        held = {c.id for c in cases if c.split == "heldout"}
        assert tune and held and not tune & held, spec.name
        assert {c.guard for c in cases} == {spec.name}


def test_the_guard_sets_leave_out_the_research_evaluation_articles() -> None:
    questions = read_jsonl(build_sets.RESEARCH_SET)
    evaluated = {q["article"] for q in questions}
    assert len(evaluated) >= 100
    for case in read_cases(GUARD_SETS / "research-support.jsonl"):
        assert not evaluated & set(case.input["sources"]), case.id


def test_the_fresh_held_out_set_shares_no_article_with_any_other_set() -> None:
    fresh = read_jsonl(build_sets.FRESH_SET)
    assert len(fresh) == 60 and {q["split"] for q in fresh} == {"heldout"}
    others = {q["article"] for q in read_jsonl(build_sets.RESEARCH_SET)}
    for path in GUARD_SETS.glob("*.jsonl"):
        for case in read_cases(path):
            others |= set(json.dumps(case.input, ensure_ascii=False).split('"'))
    assert not others & {q["article"] for q in fresh}


def test_the_committed_files_are_what_the_builders_make() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "build_sets.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
