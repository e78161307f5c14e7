"""A fake Game of 24 model for the experiment tests, and small builders.

`arithmetic_model()` answers like a weak but sane model: proposals list every `a op b`
over the numbers in the prompt (so searches can succeed), the value prompt says
"likely", io/cot answer with a fixed (usually wrong) expression.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

from guardsearch.core.messages import ModelRequest
from guardsearch.experiments.executors import LocalExecutor
from guardsearch.experiments.trial import TrialResult
from guardsearch.models.cache import CachedModel
from guardsearch.models.replay import FileCache
from guardsearch.models.scripted import ScriptedModel

_INPUT = re.compile(r"Input:\s*([-\d/ ]+)\s*$", re.M)


def _numbers(request: ModelRequest) -> list[str]:
    text = request.messages[-1].content
    found = _INPUT.findall(text)
    if found:
        return found[-1].split()
    return text.strip().rstrip(":").split()


def answer(request: ModelRequest) -> str:
    if request.json_schema and "value" in request.json_schema.get("properties", {}):
        return json.dumps({"value": "likely"})
    numbers = _numbers(request)
    if request.json_schema:  # the grammar-constrained proposer
        steps = [f"{a} {op} {b}" for a, b in itertools.combinations(numbers, 2) for op in "*+-"]
        return json.dumps({"steps": steps[:8]})
    if "Steps" in request.messages[0].content:  # chain of thought
        return "Steps:\n1 + 2 = 3 (left: 3)\nAnswer: " + " + ".join(numbers) + " = 24"
    return "Answer: " + " * ".join(numbers) + " = 24"


def arithmetic_model() -> ScriptedModel:
    return ScriptedModel(answer, name="arithmetic")


def recorder(path: Path) -> CachedModel:
    return CachedModel(arithmetic_model(), FileCache(path))


def result(
    *,
    problem: str = "p1",
    method: str = "m",
    succeeded: bool = True,
    calls: int = 1,
    budget: int | None = 10,
    trial: int = 0,
    **extra: Any,
) -> TrialResult:
    fields: dict[str, Any] = {
        "key": f"{problem}|{method}|t{trial}|b{budget}",
        "problem": problem,
        "method": method,
        "trial": trial,
        "budget": budget,
        "model": "fake",
        "succeeded": succeeded,
        "termination": "success" if succeeded else "budget_exhausted",
        "calls": calls,
        "prompt_tokens": 10 * calls,
        "completion_tokens": 2 * calls,
        "cached_prompt_tokens": 5 * calls,
        "seconds": 0.5 * calls,
    }
    fields.update(extra)
    return TrialResult(**fields)


class CountingExecutor(LocalExecutor):
    """The local executor, remembering the keys of the trials it ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def run(self, specs: Any, on_result: Any) -> None:
        self.ran += [s.key for s in specs]
        super().run(specs, on_result)
