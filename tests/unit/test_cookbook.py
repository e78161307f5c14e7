"""The Game of 24 cookbook (docs/cookbook/game24.md) runs as it is written, block after
block in one namespace, with a scripted proposer in place of the embedded model.

The printed figures of the page come from the real model, so they are not compared; what
this checks is that every call the page shows still exists and takes what it is given.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import guardsearch
import guardsearch.apps.solve as app_solve
from guardsearch import ModelRequest, ScriptedModel

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"```python\n(.*?)```", re.S)

# The numbers left -> the proposer's steps: a detour first (10 - 5), then the winning path.
STEPS = {
    "4 5 6 10": ["4 + 5", "5 / 4", "6 + 10", "10 - 5", "5 * 6", "6 / 5"],
    "4 5 6": ["4 + 5", "5 - 4"],
    "1 6": ["6 - 1"],
    "6 9": ["9 - 6"],
    "4 10 30": ["30 - 10"],
    "4 20": ["4 + 20"],
}


def proposer(request: ModelRequest) -> str:
    match = re.search(r"Input: ([^\n]*)", request.messages[-1].content)
    left = " ".join(match.group(1).split()) if match else ""
    return json.dumps({"steps": STEPS.get(left, ["4 + 5"])})


def test_every_cookbook_block_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    def scripted(spec: Any = None) -> ScriptedModel:
        return ScriptedModel(proposer)

    monkeypatch.setattr(guardsearch, "model_from_spec", scripted)
    monkeypatch.setattr(app_solve, "model_from_spec", scripted)
    page = (ROOT / "docs" / "cookbook" / "game24.md").read_text(encoding="utf-8")
    blocks = FENCE.findall(page)
    assert len(blocks) >= 6
    printed: list[str] = []
    namespace: dict[str, Any] = {"print": lambda *a, **_: printed.append(" ".join(map(str, a)))}
    for i, code in enumerate(blocks):
        exec(compile(code, f"<cookbook block {i}>", "exec"), namespace)
    assert namespace["result"].succeeded  # the resumed run's first leg found 24
    assert namespace["again"].succeeded
    assert "4 + 20 = 24 (left: 24)" in printed  # the winning path, as section 2 prints it
