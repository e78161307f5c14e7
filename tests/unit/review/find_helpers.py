"""Scripted model answers for the find app."""

from __future__ import annotations

import json

from guardsearch.core.messages import ModelRequest

PLAN = {
    "reflection": {
        "plan": "search paintings, keep those by impressionists",
        "assumptions": ["paintings are wanted, not painters"],
        "risks": ["articles about the painters themselves"],
        "success_criteria": "at least 2 verified paintings",
    },
    "item_type": "paintings",
    "qualifier": "by impressionist painters",
    "keywords": ["impressionist", "painters"],
    "domain": "art",
}


def answer(request: ModelRequest) -> str:
    """Plan when asked to plan; the judge says yes unless the item is the Mona Lisa."""
    schema = json.dumps(request.json_schema or {})
    if "reflection" in schema:
        return json.dumps(PLAN)
    if "Mona Lisa" in request.messages[-1].content:
        return json.dumps({"answer": "no", "reason": "Leonardo is no impressionist"})
    return json.dumps({"answer": "yes", "reason": "an impressionist painting"})
