"""One search of the engine benchmark, for counting its instructions under valgrind.

The wall-time figures of otel_overhead.py swing by tens of percent on a shared 2-core
machine; an instruction count does not. Run with tracing off or forwarding to the span
export process (held, as while a search runs: no process, nothing encoded), at two
sizes, and take the difference per expansion (benchmarks/results/otel_overhead.md):

    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \\
        "$(python3 -c 'import sys; print(sys.executable)')" \\
        benchmarks/otel_instructions.py {off|fwd} {bfs|astar} N

(the interpreter itself: valgrind does not follow a pyenv shim's exec.) One search in
a fresh process: what a run leaves behind for the next one to pay is not counted (a
cycle that kept each finished run alive until the collector's next full pass cost the
next search +30 % and showed here as +0.5 %), so benchmarks/otel_overhead.py times many
searches in long-lived processes.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import overhead

from guardsearch import otel
from guardsearch.models.scripted import ScriptedModel
from guardsearch.search import search


def main() -> None:
    mode, strategy, expansions = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "fwd":
        from guardsearch.otel import setup
        from guardsearch.otel.forward import Channel

        tracer, provider, stop = setup._start_forwarding(
            False, Channel(spawn=False), make_global=False
        )
        otel._tracing = otel._Tracing(tracer, provider, False, stop)
    model = ScriptedModel(overhead._propose)
    asyncio.run(search(overhead.WideSpace(), strategy, model=model, max_expansions=expansions))
    os._exit(0)  # no exit handlers: only the search is counted


if __name__ == "__main__":
    main()
