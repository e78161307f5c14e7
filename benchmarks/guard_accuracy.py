"""Measure every shipped guard on its labelled set: false-reject and false-accept rates.

A false reject is a right output (label "pass") the guard rejected; a false accept a
wrong output (label "fail") it accepted. Rates come with Wilson 95% intervals, overall,
per split (tune / held out) and per shape. Code guards need no model and run on their
whole set; model guards (`--model SPEC`) run on a stratified sample of the set they
share with a code guard (`--sample`, half right and half wrong outputs).

    python benchmarks/guard_accuracy.py                      # code guards
    flock /tmp/gs-model.lock python benchmarks/guard_accuracy.py --model embedded \
        --only research-support-model find-judge --sample 40

Results merge into benchmarks/results/guard_accuracy.{json,md} by guard name, so a
model run keeps the code guards' figures and the other way round.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from guardbench.cases import GUARD_SETS, Case, read_cases
from guardbench.rates import Outcome, by_shape, false_accept, false_reject
from guardbench.registry import GUARDS, GuardSpec, judge_all

RESULTS = Path(__file__).parent / "results"
SAMPLE_SEED = 40


def load(spec: GuardSpec, sets: Path = GUARD_SETS) -> list[Case]:
    return read_cases(sets / f"{spec.set_name}.jsonl")


def sample(cases: list[Case], n: int, seed: int = SAMPLE_SEED) -> list[Case]:
    """`n` cases, half of each label (stratified by shape in turn), seeded."""
    rng = random.Random(seed)
    out: list[Case] = []
    for label in ("pass", "fail"):
        mine = sorted((c for c in cases if c.label == label), key=lambda c: c.id)
        rng.shuffle(mine)
        shapes = sorted({c.shape for c in mine})
        want = n // 2
        while len([c for c in out if c.label == label]) < want and mine:
            for shape in shapes:
                pick = next((c for c in mine if c.shape == shape), None)
                if pick is not None and len([c for c in out if c.label == label]) < want:
                    out.append(pick)
                    mine.remove(pick)
    return out


def measure(spec: GuardSpec, cases: list[Case], verdicts: list[bool]) -> dict[str, Any]:
    """The figures of one guard: rates overall, per split and per shape, and the cases
    it got wrong."""
    outcomes = [Outcome(c.label, c.shape, v) for c, v in zip(cases, verdicts, strict=True)]
    splits = {}
    for split in ("tune", "heldout"):
        mine = [o for c, o in zip(cases, outcomes, strict=True) if c.split == split]
        splits[split] = {
            "false_reject": false_reject(mine).as_dict(),
            "false_accept": false_accept(mine).as_dict(),
        }
    return {
        "guard": spec.name,
        "where": spec.where,
        "judges": spec.what,
        "label": spec.truth,
        "kind": "model" if spec.model else "code",
        "set": f"benchmarks/data/guard_sets/{spec.set_name}.jsonl",
        "cases": len(cases),
        "false_reject": false_reject(outcomes).as_dict(),
        "false_accept": false_accept(outcomes).as_dict(),
        "splits": splits,
        "shapes": {
            shape: {"label": next(c.label for c in cases if c.shape == shape), **rate.as_dict()}
            for shape, rate in by_shape(outcomes).items()
        },
        "wrong": [c.id for c, o in zip(cases, outcomes, strict=True) if o.wrong],
    }


def run(specs: list[GuardSpec], model_spec: str | None, n: int) -> list[dict[str, Any]]:
    model = None
    if any(s.model for s in specs):
        from guardsearch.models.metered import Metered
        from guardsearch.models.spec import model_from_spec

        model = Metered(model_from_spec(model_spec or "embedded"))
    rows = []
    for spec in specs:
        cases = load(spec)
        if spec.model:
            cases = sample(cases, n)
        started = time.perf_counter()
        verdicts = judge_all(spec, cases, model)
        row = measure(spec, cases, verdicts)
        row["seconds"] = round(time.perf_counter() - started, 1)
        row["date"] = time.strftime("%Y-%m-%d")
        if spec.model:
            row["model"] = model_spec or "embedded"
            row["sample"] = f"{len(cases)} of the set, seed {SAMPLE_SEED}"
        rows.append(row)
        print(
            f"{spec.name}: false reject {_show(row['false_reject'])}, "
            f"false accept {_show(row['false_accept'])}",
            file=sys.stderr,
        )
    return rows


def _show(rate: dict[str, Any]) -> str:
    if not rate["n"]:
        return "n/a"
    low, high = rate["ci95"]
    return f"{rate['k']}/{rate['n']} = {rate['rate']:.1%} [{low:.1%}, {high:.1%}]"


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# How well each guard judges",
        "",
        f"{report['machine']}. `python benchmarks/guard_accuracy.py` on the labelled sets "
        "in `benchmarks/data/guard_sets/` (built by `benchmarks/build_sets.py`, fixed seeds). "
        "False reject: right outputs the guard rejected; false accept: wrong outputs it "
        "accepted; Wilson 95% intervals in brackets. Model guards ran on a sample of the "
        "set named (their `model` column).",
        "",
        "| guard | where | right when | cases | false reject | false accept | model |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in report["guards"]:
        lines.append(
            f"| {row['guard']} | {row['where']} | {row['label']} | {row['cases']} | "
            f"{_show(row['false_reject'])} | {_show(row['false_accept'])} | "
            f"{row.get('model', '-')} |"
        )
    lines += ["", "## Per shape", "", "Share of the shape's cases the guard got wrong.", ""]
    for row in report["guards"]:
        lines += [f"### {row['guard']}", "", "| shape | label | wrong |", "|---|---|---|"]
        for shape, rate in row["shapes"].items():
            lines.append(f"| {shape} | {rate['label']} | {_show(rate)} |")
        held = row["splits"]["heldout"]
        lines += [
            "",
            f"Held-out half: false reject {_show(held['false_reject'])}, "
            f"false accept {_show(held['false_accept'])}.",
            "",
        ]
    return "\n".join(lines)


def merge(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`old` rows replaced by `new` ones of the same guard, in the registry's order (a
    guard no longer in the registry leaves the report)."""
    rows = {r["guard"]: r for r in old} | {r["guard"]: r for r in new}
    order = [s.name for s in GUARDS]
    return sorted(
        (r for r in rows.values() if r["guard"] in order), key=lambda r: order.index(r["guard"])
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", help="guard names (default: every code guard)")
    parser.add_argument("--model", help="model spec for the model guards (e.g. embedded)")
    parser.add_argument("--sample", type=int, default=40, help="cases per model guard")
    parser.add_argument("--name", default="guard_accuracy")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    if args.only:
        specs = [s for s in GUARDS if s.name in args.only]
    else:
        specs = [s for s in GUARDS if not s.model or args.model]
    rows = run(specs, args.model, args.sample)
    if args.no_write:
        return
    path = RESULTS / f"{args.name}.json"
    old = json.loads(path.read_text())["guards"] if path.is_file() else []
    report = {
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
        "guards": merge(old, rows),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    (RESULTS / f"{args.name}.md").write_text(markdown(report))


if __name__ == "__main__":
    main()
