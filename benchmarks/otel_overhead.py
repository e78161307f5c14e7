"""What OpenTelemetry tracing costs the search engine (docs/observability.md).

The engine benchmark of overhead.py (a zero-latency scripted model, three children per
expansion) in alternating turns, each turn its own process:

- `base`: a checkout from before tracing existed (`--base-src DIR`), nothing set;
- `off`: this tree with no endpoint (tracing off: must cost what `base` costs);
- `otlp`: this tree with `OTEL_EXPORTER_OTLP_ENDPOINT` set, so every run's spans go over
  OTLP/HTTP (protobuf, the SDK's batching processor) to a receiver on 127.0.0.1 that
  decodes every request and counts the spans (all of them must arrive); the spans are
  made in the span export process (otel/forward.py), as they are by default;
- `inproc` (with `--inproc`): the same, with `GUARDSEARCH_OTEL_IN_PROCESS=1`: the spans
  made and exported in the run's own process (the SDK's batching thread).

Per strategy it reports µs per expansion: `search` (the wall time of the search call),
`with_export` (the search plus flushing every span to the receiver), `cpu` (the CPU
time of the run's process for both, exporter threads included, plus that of the export
process: on a shared, loaded machine the steadier figure) and `cpu_run` (the run's
process alone). With `--delay-ms`, the
scripted model takes that long per call.

    python benchmarks/otel_overhead.py [--rounds 6] [--expansions 2000] [--base-src DIR]
        [--src DIR] [--delay-ms 0] [--inproc] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
STRATEGIES = ("bfs", "astar")
ON_MODES = ("otlp", "inproc")
# wall of the search; of the search and the export's flush; CPU of every process (the
# run's, its threads, the export process); CPU of the run's process alone
MEASURES = ("search", "with_export", "cpu", "cpu_run")


def turn(expansions: int, delay_ms: float) -> dict[str, Any]:
    """One turn in this process: each strategy's search timed, then the export flushed."""
    sys.path.insert(0, str(HERE))
    import overhead

    from guardsearch.models.scripted import ScriptedModel
    from guardsearch.search import search

    async def run(strategy: str) -> tuple[float, float, int]:
        model = ScriptedModel(overhead._propose, delay_s=delay_ms / 1000)
        started, cpu = time.perf_counter(), time.process_time()
        result = await search(
            overhead.WideSpace(), strategy, model=model, max_expansions=expansions
        )
        return time.perf_counter() - started, time.process_time() - cpu, result.expansions

    counted = _count_spans()
    asyncio.run(run("bfs"))  # warm up (imports, caches; the export process starts)
    _, _, exporter_cpu, _ = _flush()
    out: dict[str, Any] = {}
    for strategy in STRATEGIES:
        seconds, cpu, done = asyncio.run(run(strategy))
        flush_wall, flush_cpu, exporter_after, _ = _flush()
        exported = exporter_after - exporter_cpu
        exporter_cpu = exporter_after
        out[strategy] = {
            "search": round(1e6 * seconds / done, 1),
            "with_export": round(1e6 * (seconds + flush_wall) / done, 1),
            "cpu": round(1e6 * (cpu + flush_cpu + exported) / done, 1),
            "cpu_run": round(1e6 * (cpu + flush_cpu) / done, 1),
        }
    out["emit_ns"] = _emit_ns()
    out["tracing"] = "opentelemetry.sdk" in sys.modules
    made = _flush()[3]
    out["spans"] = made if made is not None else (counted[0] if counted else 0)
    return out


def _emit_ns() -> float:
    """Nanoseconds per `Trace.emit` of a model-call-sized event to one subscriber (the
    JSONL sink's place), best of 10 runs of 2,000: what every event costs whether
    tracing is on or off. With tracing on, what the export process is handed is flushed
    between runs (untimed): the figure is the run's note of each event, not its
    encoding (which waits for a quiet moment, otel/forward.py)."""
    import timeit

    from guardsearch.core.events import Trace

    trace = Trace()
    trace.subscribe(lambda event: None)
    data = {"model": "m", "prompt_tokens": 10, "completion_tokens": 5, "latency_s": 0.1}
    n, best = 2000, float("inf")
    for _ in range(10):
        best = min(
            best, timeit.timeit(lambda: trace.emit("note", step="s", node="n", **data), number=n)
        )
        _flush()
    return round(1e9 * best / n, 1)


def _count_spans() -> list[int]:
    """A list whose one number counts the spans ended (empty with tracing off)."""
    if "opentelemetry.sdk" not in sys.modules:
        return []
    from opentelemetry import trace
    from opentelemetry.sdk.trace import SpanProcessor

    count = [0]

    class Count(SpanProcessor):
        def on_end(self, span: Any) -> None:
            count[0] += 1

    trace.get_tracer_provider().add_span_processor(Count())  # type: ignore[attr-defined]
    return count


def _flush() -> tuple[float, float, float, int | None]:
    """Wall and CPU seconds to push every span still queued to the receiver, the export
    process's CPU seconds so far, and the spans it made (0, 0, 0, None with tracing off;
    the last two 0 and None when the spans are made in this process)."""
    if "opentelemetry.sdk" not in sys.modules:
        return 0.0, 0.0, 0.0, None
    from opentelemetry import trace

    from guardsearch import otel

    started, cpu = time.perf_counter(), time.process_time()
    stats = otel.export_stats(timeout_s=600)
    if stats is None:
        trace.get_tracer_provider().force_flush(60_000)  # type: ignore[attr-defined]
    elif stats["dropped"]:
        raise SystemExit(f"the export process dropped {stats['dropped']} events")
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    if stats is None:
        return wall, cpu, 0.0, None
    return wall, cpu, stats["cpu_s"], int(stats["spans"])


class Receiver:
    """An OTLP/HTTP trace receiver in a thread: counts the spans it decodes."""

    def __init__(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        self.spans = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.spans += sum(
                    len(s.spans) for r in request.resource_spans for s in r.scope_spans
                )
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def run_turn(mode: str, args: argparse.Namespace, receiver: Receiver) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = str(args.base_src if mode == "base" else args.src)
    env.pop("GUARDSEARCH_OTEL_IN_PROCESS", None)
    if mode in ON_MODES:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.url
    if mode == "inproc":
        env["GUARDSEARCH_OTEL_IN_PROCESS"] = "1"
        # The SDK's batching processor drops spans beyond its queue (2,048 by default):
        # keep every one. `otlp` keeps the default: the export process drops nothing
        # (the events wait in the pipe instead) and the limits of how long the run's
        # process holds its events are the default ones (otel/pacing.py).
        env["OTEL_BSP_MAX_QUEUE_SIZE"] = "1000000"
    command = [sys.executable, __file__, "--turn", "--expansions", str(args.expansions)]
    command += ["--delay-ms", str(args.delay_ms)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"{mode} turn failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    if result["tracing"] != (mode in ON_MODES):
        raise SystemExit(f"{mode} turn: tracing was {'on' if result['tracing'] else 'off'}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--expansions", type=int, default=2000)
    parser.add_argument("--delay-ms", type=float, default=0.0)
    parser.add_argument("--base-src", type=Path, default=None)
    parser.add_argument(
        "--src", type=Path, default=SRC, help="the tree measured (default: this one)"
    )
    parser.add_argument("--no-otlp", action="store_true", help="only base and off")
    parser.add_argument(
        "--inproc", action="store_true", help="also spans made in the run's own process"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--turn", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--markdown", type=Path, default=None, help="print the tables of a --json report"
    )
    args = parser.parse_args()
    if args.markdown:
        print(markdown(json.loads(args.markdown.read_text())))
        return
    if args.turn:
        print(json.dumps(turn(args.expansions, args.delay_ms)))
        return
    modes = (["base"] if args.base_src else []) + ["off"] + ([] if args.no_otlp else ["otlp"])
    modes += ["inproc"] if args.inproc else []
    receiver = Receiver()
    turns: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    for _ in range(args.rounds):
        for mode in modes:  # alternating: every mode sees the same load, round by round
            turns[mode].append(run_turn(mode, args, receiver))
    report: dict[str, Any] = {
        "rounds": args.rounds,
        "expansions": args.expansions,
        "delay_ms": args.delay_ms,
        "spans_received": receiver.spans,
        "load_avg": os.getloadavg()[0],
        "us_per_expansion": {},
    }
    for mode in modes:
        for strategy in STRATEGIES:
            for measure in MEASURES:
                values = [t[strategy][measure] for t in turns[mode]]
                report["us_per_expansion"][f"{mode}/{strategy}/{measure}"] = {
                    "best": min(values),
                    "median": round(statistics.median(values), 1),
                }
    report["overhead_pct"] = overheads(report["us_per_expansion"], modes)
    report["paired_overhead_pct"] = paired(turns, modes)
    report["emit_ns"] = {m: min(t["emit_ns"] for t in turns[m]) for m in modes}
    report["turns"] = {m: [{k: t[k] for k in STRATEGIES} for t in turns[m]] for m in modes}
    report["spans_made"] = sum(t["spans"] for m in ON_MODES for t in turns.get(m, []))
    if report["spans_made"] != receiver.spans:
        raise SystemExit(f"made {report['spans_made']} spans, received {receiver.spans}")
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for key, row in report["us_per_expansion"].items():
        print(f"{key:28} best {row['best']:>8} µs  median {row['median']:>8} µs")
    for key, pct in report["overhead_pct"].items():
        print(f"{key:28} {pct:+.1f} %")
    for key, row in report["paired_overhead_pct"].items():
        spread = f"{row['min']:+.1f}..{row['max']:+.1f}"
        print(f"paired {key:28} median {row['median']:+.1f} % ({spread})")
    print(f"spans received: {receiver.spans}")


def paired(turns: dict[str, list[dict[str, Any]]], modes: list[str]) -> dict[str, Any]:
    """Each tracing mode against `off` in the same round (the turns next to each other,
    under the same load), in percent: the median over the rounds, and the lowest and
    highest."""
    out: dict[str, Any] = {}
    for mode in (m for m in ON_MODES if m in modes):
        for strategy in STRATEGIES:
            for measure in MEASURES:
                base = measure if measure.startswith("cpu") else "search"
                pcts = [
                    round(100 * (on[strategy][measure] / off[strategy][base] - 1), 1)
                    for on, off in zip(turns[mode], turns["off"], strict=True)
                ]
                out[f"{mode} vs off/{strategy}/{measure}"] = {
                    "median": round(statistics.median(pcts), 1),
                    "min": min(pcts),
                    "max": max(pcts),
                }
    return out


def overheads(table: dict[str, dict[str, float]], modes: list[str]) -> dict[str, float]:
    """Each mode's median against `off` (and `off` against `base`), in percent: the wall
    time of the search, of the search and the export, and the process's CPU time for
    both (which a loaded machine disturbs less)."""
    out = {}
    for strategy in STRATEGIES:
        for measure in ("search", "cpu") if "base" in modes else ():
            off = table[f"off/{strategy}/{measure}"]["median"]
            base = table[f"base/{strategy}/{measure}"]["median"]
            out[f"off vs base/{strategy}/{measure}"] = round(100 * (off / base - 1), 1)
        for mode in (m for m in ON_MODES if m in modes):
            for measure in MEASURES:
                off = table[f"off/{strategy}/{measure if measure.startswith('cpu') else 'search'}"]
                on = table[f"{mode}/{strategy}/{measure}"]["median"]
                out[f"{mode} vs off/{strategy}/{measure}"] = round(
                    100 * (on / off["median"] - 1), 1
                )
    return out


LABELS = {
    "off": "off: no endpoint",
    "otlp": "on: export process (default)",
    "inproc": "on: in the run's process (`GUARDSEARCH_OTEL_IN_PROCESS=1`)",
    "base": "before tracing",
}
ROWS = {
    "search": "wall, search",
    "with_export": "wall, search + flushing the export",
    "cpu": "CPU, all processes (exporter included)",
    "cpu_run": "CPU, the run's process alone",
}


def markdown(report: dict[str, Any]) -> str:
    """The tables of otel_overhead.md, from a `--json` report."""
    table = report["us_per_expansion"]
    modes = [m for m in LABELS if f"{m}/bfs/search" in table]
    out = [
        f"{report['rounds']} rounds of alternating turns ({', '.join(modes)}), "
        f"{report['expansions']:,} expansions per strategy per turn, model delay "
        f"{report['delay_ms']} ms; load average {report['load_avg']:.1f} on 2 cores at the "
        f"end; spans made {report['spans_made']:,}, received {report['spans_received']:,}.",
        "",
        "| µs per expansion, median (best) | " + " | ".join(LABELS[m] for m in modes) + " |",
        "|---" * (len(modes) + 1) + "|",
    ]
    for strategy in STRATEGIES:
        for measure, label in ROWS.items():
            cells = []
            for mode in modes:
                row = table[f"{mode}/{strategy}/{measure}"]
                same = measure != "search" and mode in ("off", "base") and measure != "cpu_run"
                cells.append(
                    "—"
                    if same and measure == "with_export"
                    else f"{row['median']:,.0f} ({row['best']:,.0f})"
                )
            out.append(f"| {strategy}, {label} | " + " | ".join(cells) + " |")
    out += [
        "",
        "| against off | median of the per-round ratios (lowest..highest) | ratio of the medians |",
        "|---|---|---|",
    ]
    for key, row in report["paired_overhead_pct"].items():
        pct = report["overhead_pct"][key]
        out.append(
            f"| {key} | {row['median']:+.1f} % ({row['min']:+.1f}..{row['max']:+.1f}) "
            f"| {pct:+.1f} % |"
        )
    emit = ", ".join(f"{m} {v:,.0f}" for m, v in report["emit_ns"].items())
    out += ["", f"One `Trace.emit` to one subscriber, best of the turns (ns): {emit}."]
    return "\n".join(out)


if __name__ == "__main__":
    main()
