"""docs/guards.md "Prevent, repair, diversify": the example runs as written, on scripted
models in place of the embedded one (a constraining backend, then a plain one)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from guardsearch import ScriptedModel
from guardsearch.core.steering import Steering

DOC = Path(__file__).resolve().parents[2] / "docs" / "guards.md"
MODEL_LINE = 'model = model_from_spec("embedded")'


def example() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("### A guard with a constraint and a fix", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "the example's code block is missing"
    code = match.group(1)
    assert MODEL_LINE in code
    return code


def run(model: ScriptedModel) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    code = example().replace(MODEL_LINE, "model = SCRIPTED").replace("print(", "_ = (")
    namespace["SCRIPTED"] = model
    exec(compile(code, str(DOC), "exec"), namespace)  # our own docs
    return namespace


def test_on_a_constraining_backend_the_constraint_is_in_the_request_and_counted() -> None:
    model = ScriptedModel(
        ['{"answer": "Vladimir the Great", "cites": [1]}'], constrained_decoding=True
    )
    done = run(model)
    cites = model.requests[0].json_schema["properties"]["cites"]  # type: ignore[index]
    assert cites == {
        "type": "array",
        "items": {"type": "integer", "enum": [1, 2]},
        "maxItems": 3,
        "minItems": 1,
    }
    assert done["outcome"].steering == Steering(outputs=1, prevented=1)
    assert "Sources: {1: 'Vladimir" in model.requests[0].messages[-1].content


def test_on_a_plain_backend_the_rule_stays_a_guard_and_its_fix_repairs() -> None:
    model = ScriptedModel(['{"answer": "Vladimir the Great", "cites": []}'])
    done = run(model)
    assert done["outcome"].value == {"answer": "Vladimir the Great", "cites": [1]}
    assert model.calls == 1
    assert done["outcome"].steering == Steering(outputs=1, repairs=1)
