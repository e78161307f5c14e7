"""The fleet tests' app (named `fleet_apps:build`, importable by Ray's workers).

A run looks for `depth` numbers, each 1, 2 or 3, that add up to `target`. The scripted
model answers every request with the same text ("1, 2, 3": three children), so its
answers depend on nothing but the request and a run's result only on its problem:
a run taken over after a kill must end exactly like an uninterrupted one. The guard
prunes a path that can no longer reach the target, so each problem makes its own
tree (a dozen to a few dozen model calls).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guardsearch import Context, GuardResult
from guardsearch.registry import AppSetup
from guardsearch.runs import InputNeeded
from guardsearch.search import Node, Proposal, Root

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "search"))

from search_helpers import CountingSpace

ANSWER = "1, 2, 3"


def answers_file(folder: Path) -> Path:
    """The scripted model's answers (`scripted:FILE?delay=S`): one, repeated."""
    path = folder / "fleet_answers.json"
    path.write_text(json.dumps([ANSWER]), encoding="utf-8")
    return path


@dataclass(kw_only=True)
class SumSpace(CountingSpace):
    """The search tests' space of integer paths (one request per path, children from
    the answer's numbers), judged by whether a path can still reach the target."""

    target: int
    depth: int
    ask_at: int = 0  # a person is asked before a path of this length (0: never)

    def root(self) -> Root:
        objective = f"{self.depth} numbers adding to {self.target}"
        return Root(state=[], context=Context(objective=objective))

    async def evaluate(self, node: Node, proposal: Proposal, context: Context) -> GuardResult:
        path: list[int] = proposal.state
        if len(path) == self.ask_at and not context.inputs:
            raise InputNeeded(f"go on past {path}?")
        total, left = sum(path), self.depth - len(path)
        if total + left > self.target or total + 3 * left < self.target:
            return GuardResult.fail(f"{path} cannot add up to {self.target}", "sum")
        return GuardResult.ok("sum", score=1.0 - abs(self.target - total) / (3 * self.depth))

    def is_goal(self, node: Node) -> bool:
        return node.viable and len(node.state) == self.depth and sum(node.state) == self.target

    def answer(self, node: Node) -> Any:
        return node.state


def build(problem: dict[str, Any], strategy: str) -> AppSetup:
    return AppSetup(
        space=SumSpace(
            target=int(problem["target"]),
            depth=int(problem["depth"]),
            depth_limit=int(problem["depth"]),
            ask_at=int(problem.get("ask_at", 0)),
        )
    )


def problems(count: int) -> list[dict[str, int]]:
    """`count` different problems (depth 4 to 6, every reachable target in turn)."""
    found = [
        {"target": t, "depth": d} for d in (5, 6, 4) for t in range(d + 1, 3 * d) if t % 2 == d % 2
    ]
    return [found[i % len(found)] | {"n": i} for i in range(count)]
