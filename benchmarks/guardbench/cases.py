"""A labelled case, its JSON Lines file, the tune/held-out split and balancing.

A case says what a guard should do with one input: `label` "pass" (a right output the
guard must accept) or "fail" (a wrong one it must reject), the `shape` it was drawn
as (which kind of right or wrong output), a `rule` saying how the label was decided,
and the `input` the guard's adapter needs.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

Label = Literal["pass", "fail"]
Split = Literal["tune", "heldout"]
DATA = Path(__file__).parents[1] / "data"
GUARD_SETS = DATA / "guard_sets"


@dataclass(frozen=True)
class Case:
    guard: str
    id: str
    label: Label
    shape: str
    input: dict[str, Any]
    split: Split = "tune"
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Case:
        return cls(**data)


def jsonl_text(rows: Iterable[dict[str, Any]]) -> str:
    """One sorted-key JSON object a line: stable text for stable files."""
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(jsonl_text(rows), encoding="utf-8")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def read_cases(path: Path) -> list[Case]:
    return [Case.from_dict(row) for row in read_jsonl(path)]


def with_splits(cases: Sequence[Case], seed: int) -> list[Case]:
    """Each (label, shape) stratum shuffled with `seed` and cut in two: the first half
    (rounded up) is `tune`, the rest `heldout`, so both halves keep the mix."""
    strata: dict[tuple[str, str], list[Case]] = defaultdict(list)
    for case in cases:
        strata[(case.label, case.shape)].append(case)
    rng = random.Random(seed)
    split: dict[str, Split] = {}
    for key in sorted(strata):
        group = sorted(strata[key], key=lambda c: c.id)
        rng.shuffle(group)
        cut = (len(group) + 1) // 2
        for i, case in enumerate(group):
            split[case.id] = "tune" if i < cut else "heldout"
    return [replace(c, split=split[c.id]) for c in cases]


def balanced(
    passing: Sequence[Case], failing: Sequence[Case], per_label: int, rng: random.Random
) -> list[Case]:
    """`per_label` cases of each label (all there are when fewer), spread over the
    shapes as evenly as they allow, in a stable order."""
    return [*spread(passing, per_label, rng), *spread(failing, per_label, rng)]


def spread(cases: Sequence[Case], n: int, rng: random.Random) -> list[Case]:
    """Up to `n` of `cases`, taking shapes in turn (round robin over shuffled shapes)."""
    by_shape: dict[str, list[Case]] = defaultdict(list)
    for case in sorted(cases, key=lambda c: c.id):
        by_shape[case.shape].append(case)
    for group in by_shape.values():
        rng.shuffle(group)
    chosen: list[Case] = []
    shapes = sorted(by_shape)
    while len(chosen) < n and any(by_shape[s] for s in shapes):
        for shape in shapes:
            if by_shape[shape] and len(chosen) < n:
                chosen.append(by_shape[shape].pop())
    return chosen
