"""Scripted model answers for the find app."""

from __future__ import annotations

import json
from pathlib import Path

from guardsearch.core.messages import ModelRequest
from guardsearch.corpus import CorpusIndex, Document

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


def wiki_index(path: Path, corpus: str, rows: list[tuple[str, str, str]]) -> CorpusIndex:
    """A corpus index at `path` of (title, description, body) encyclopedia articles."""
    index = CorpusIndex(path)
    index.add(
        corpus,
        [
            Document(corpus=corpus, key=t, title=t, description=d, body=b, kind="wikipedia")
            for t, d, b in rows
        ],
    )
    return index
