"""The service the HTTP fuzz test talks to, in a process of its own (its own GIL, so
/healthz latency is the server's, not the fuzzer's): a scripted model, a small corpus,
one API key. Run as `python fuzz_server.py PORT INDEX_FILE KEY`."""

from __future__ import annotations

import json
import sys

import uvicorn

from guardsearch import ScriptedModel, allow_real_models
from guardsearch.core.messages import ModelRequest
from guardsearch.corpus import CorpusIndex, Document
from guardsearch.loops.research import ResearchConfig
from guardsearch.server import create_app
from guardsearch.tools import CorpusProvider

DOCS = {
    "Georges Seurat": "Georges Seurat was a French painter who devised pointillism.",
    "Paul Signac": "Paul Signac was a French painter who worked with Seurat.",
    "Eiffel Tower": "The Eiffel Tower is a lattice tower in Paris, built 1887 to 1889.",
    "Las Meninas": "Las Meninas is a 1656 painting by Diego Velazquez in the Prado.",
}


def answer(request: ModelRequest) -> str:
    """Whatever is asked, an answer of the shape the caller's schema wants."""
    title = (request.json_schema or {}).get("title")
    if title == "PlanDraft":
        queries = [{"query": q, "intent": "find it"} for q in ("Seurat", "painter", "Paris")]
        return json.dumps({"complexity": "simple", "queries": queries})
    if title == "ReflectionDraft":
        return json.dumps({"sufficient": True, "confidence": 0.8, "gaps": [], "new_queries": []})
    if title == "SynthesisDraft":
        return json.dumps(
            {"answer": "Georges Seurat was a French painter [1].", "citations": ["[1]"]}
        )
    return '{"steps": ["5 * 6", "4 + 5"]}'  # the Game of 24 proposer, and anything else


def main(port: int, index_file: str, key: str) -> None:
    allow_real_models(False)
    index = CorpusIndex(index_file)
    if index.info("fuzz") is None:
        index.add(
            "fuzz",
            [
                Document(corpus="fuzz", key=t, title=t, body=b, location=f"https://example.org/{i}")
                for i, (t, b) in enumerate(DOCS.items())
            ],
        )
    app = create_app(
        model=ScriptedModel(answer, name="scripted-fuzz"),
        providers=[CorpusProvider(index)],
        config=ResearchConfig(),
        api_key=key,
        max_solve_calls=6,
        max_jobs=200,
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3])
