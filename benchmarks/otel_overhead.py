"""What OpenTelemetry tracing costs the search engine (docs/observability.md).

The engine benchmark of overhead.py (a zero-latency scripted model, three children per
expansion, bfs and astar) run by worker processes, one per mode, in alternating
turns: each round, for each strategy, every worker runs one search of `--expansions`
in a shuffled order while the others wait idle, so the turns compared sit a second
apart under the same machine load; every `--respawn` rounds the workers are replaced
by fresh ones (as pyperf does: each process is a little faster or slower for its
whole life). The figure is the paired ratio of each round (tracing on against off, in
the same round), summarised by its geometric mean with a 95 % bootstrap interval
(resampling whole worker generations), and its median:

- `base`: a tree from before tracing existed (`--base-src DIR`; `--make-base DIR`
  writes one from this tree), nothing set;
- `off`: this tree with no endpoint (tracing off: must cost what `base` costs);
- `otlp`: this tree with `OTEL_EXPORTER_OTLP_ENDPOINT` set, so every run's spans go over
  OTLP/HTTP (protobuf, the SDK's batching processor) to a receiver on 127.0.0.1 that
  decodes every request and counts the spans (all of them must arrive); the spans are
  made in the span export process (otel/forward.py), as they are by default;
- `inproc` (with `--inproc`): the same, with `GUARDSEARCH_OTEL_IN_PROCESS=1`: the spans
  made and exported in the run's own process (the SDK's batching thread).

Per turn: `search` (the search call's wall time), `cpu` (the CPU time of the worker's
process during it), and for the tracing modes, after it and untimed in `search`, the
flush of every span to the receiver: `with_export` (the search plus that flush, wall),
`cpu_run` (the worker's CPU for both: the encoding of the events, done at that quiet
moment, included) and `cpu_all` (that plus the export process's CPU). All in µs per
expansion. A tracing turn's figures are compared with the `off` turn's `search` (wall)
or `cpu` (CPU) of the same round.

    python benchmarks/otel_overhead.py [--rounds 40] [--expansions 2000] [--delay-ms 0]
        [--respawn 4] [--base-src DIR] [--no-otlp] [--inproc] [--exits N] [--seed 1] [--json]
    python benchmarks/otel_overhead.py --markdown REPORT.json
    python benchmarks/otel_overhead.py --make-base DIR
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import re
import shutil
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
MEASURES = ("search", "cpu", "with_export", "cpu_run", "cpu_all")
BOOTSTRAP = 4000  # resamples of the rounds for the 95 % interval


# --- a worker: one mode's process, running a search each time it is asked ------------


def worker(expansions: int, delay_ms: float) -> None:
    """Read `STRATEGY` lines on stdin; for each, run one search and answer a JSON line."""
    sys.path.insert(0, str(HERE))
    import overhead

    from guardsearch.models.scripted import ScriptedModel
    from guardsearch.search import search

    tracing = "opentelemetry.sdk" in sys.modules

    def run(strategy: str) -> dict[str, Any]:
        model = ScriptedModel(overhead._propose, delay_s=delay_ms / 1000)
        space = overhead.WideSpace()
        started, cpu = time.perf_counter(), time.process_time()
        result = asyncio.run(search(space, strategy, model=model, max_expansions=expansions))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        out = {"search": wall, "cpu": cpu, "expansions": result.expansions}
        if tracing:
            out.update(_flush())
        return out

    if tracing:
        _spans_here()  # with the spans made here: count them from the first
    warm: dict[str, Any] = {}
    for strategy in STRATEGIES:  # warm up (imports, caches; the export process starts)
        warm = run(strategy)
    hello = {"tracing": tracing, "exporter_cpu": warm.get("exporter_cpu", 0.0)}
    print(json.dumps(hello), flush=True)
    for line in sys.stdin:
        strategy = line.strip()
        if not strategy:
            break
        print(json.dumps(run(strategy)), flush=True)


def once(expansions: int, delay_ms: float) -> None:
    """A program that runs one bfs search and exits (what `--exits` times from outside)."""
    sys.path.insert(0, str(HERE))
    import overhead

    from guardsearch.models.scripted import ScriptedModel
    from guardsearch.search import search

    model = ScriptedModel(overhead._propose, delay_s=delay_ms / 1000)
    started = time.perf_counter()
    asyncio.run(search(overhead.WideSpace(), "bfs", model=model, max_expansions=expansions))
    print(json.dumps({"search": time.perf_counter() - started}), flush=True)


def _flush() -> dict[str, float]:
    """Push every span still held or queued to the receiver: the wall and CPU seconds
    of this process that takes, the export process's CPU seconds so far and the spans
    it has made (the last two 0 when the spans are made in this process)."""
    from opentelemetry import trace

    from guardsearch import otel

    started, cpu = time.perf_counter(), time.process_time()
    stats = otel.export_stats(timeout_s=600)
    if stats is None:
        trace.get_tracer_provider().force_flush(60_000)  # type: ignore[attr-defined]
    elif stats["dropped"]:
        raise SystemExit(f"the export process dropped {stats['dropped']} events")
    out = {"flush": time.perf_counter() - started, "flush_cpu": time.process_time() - cpu}
    out["exporter_cpu"] = stats["cpu_s"] if stats else 0.0
    out["spans"] = stats["spans"] if stats else _spans_here()
    return out


_counted: list[int] = []


def _spans_here() -> int:
    """Spans ended in this process so far (a processor added on first use, after the
    warm-up: the receiver's count includes the warm-up's, so it is added up here too)."""
    if not _counted:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import SpanProcessor

        _counted.append(0)

        class Count(SpanProcessor):
            def on_end(self, span: Any) -> None:
                _counted[0] += 1

        trace.get_tracer_provider().add_span_processor(Count())  # type: ignore[attr-defined]
    return _counted[0]


# --- the coordinator ------------------------------------------------------------------


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


class Worker:
    """One mode's worker process, and the pipe to it."""

    def __init__(self, mode: str, args: argparse.Namespace, receiver: Receiver) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        env["PYTHONPATH"] = str(args.base_src if mode == "base" else args.src)
        env.pop("GUARDSEARCH_OTEL_IN_PROCESS", None)
        if mode in ON_MODES:
            env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.url
        if mode == "inproc":
            env["GUARDSEARCH_OTEL_IN_PROCESS"] = "1"
            # The SDK's batching processor drops spans beyond its queue (2,048 by
            # default): keep every one. `otlp` keeps the defaults (its bounds on how long
            # events are held are the default ones: otel/pacing.py).
            env["OTEL_BSP_MAX_QUEUE_SIZE"] = "1000000"
        command = [sys.executable, __file__, "--worker", "--expansions", str(args.expansions)]
        command += ["--delay-ms", str(args.delay_ms)]
        self.mode = mode
        self.process = subprocess.Popen(
            command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        hello = self._answer()
        self.exporter_cpu = hello["exporter_cpu"]  # the export process's CPU after warm-up
        if hello["tracing"] != (mode in ON_MODES):
            raise SystemExit(f"{mode} worker: tracing was {'on' if hello['tracing'] else 'off'}")

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the {self.mode} worker ended (exit {self.process.wait()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def run(self, strategy: str) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(strategy + "\n")
        self.process.stdin.flush()
        return self._answer()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        if self.process.wait(600) != 0:
            raise SystemExit(f"the {self.mode} worker failed (exit {self.process.returncode})")


def per_expansion(answer: dict[str, Any], exporter_before: float) -> dict[str, float]:
    """A worker's answer as µs per expansion of every measure."""
    n = answer["expansions"]
    out = {"search": answer["search"], "cpu": answer["cpu"]}
    if "flush" in answer:
        out["with_export"] = answer["search"] + answer["flush"]
        out["cpu_run"] = answer["cpu"] + answer["flush_cpu"]
        out["cpu_all"] = out["cpu_run"] + answer["exporter_cpu"] - exporter_before
    return {k: round(1e6 * v / n, 1) for k, v in out.items()}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """`--rounds` rounds; every `--respawn` rounds, a fresh worker per mode (a process's
    own layout, hash seed and heap make it a few percent faster or slower than the next
    one for its whole life: one process per mode would pass that off as the mode's)."""
    modes = (["base"] if args.base_src else []) + ["off"] + ([] if args.no_otlp else ["otlp"])
    modes += ["inproc"] if args.inproc else []
    receiver = Receiver()
    turns: dict[str, dict[str, list[dict[str, float]]]] = {
        m: {s: [] for s in STRATEGIES} for m in modes
    }
    shuffle = random.Random(args.seed).shuffle
    made, generations = 0, []
    for first in range(0, args.rounds, args.respawn):
        rounds = min(args.respawn, args.rounds - first)
        workers = {mode: Worker(mode, args, receiver) for mode in modes}
        exporter = {mode: w.exporter_cpu for mode, w in workers.items()}
        spans = dict.fromkeys(modes, 0)
        for _ in range(rounds):
            generations.append(first // args.respawn)  # which workers ran this round
            for strategy in STRATEGIES:
                order = list(modes)
                shuffle(order)  # no mode always first (or always right after a flush)
                for mode in order:
                    answer = workers[mode].run(strategy)
                    turns[mode][strategy].append(per_expansion(answer, exporter[mode]))
                    exporter[mode] = answer.get("exporter_cpu", 0.0)
                    spans[mode] = answer.get("spans", 0)
        for each in workers.values():
            each.close()
        made += sum(spans[m] for m in modes if m in ON_MODES)
    time.sleep(0.5)  # the receiver answers before it counts: let the last count land
    if made != receiver.spans:
        raise SystemExit(f"made {made} spans, received {receiver.spans}")
    return {
        "rounds": args.rounds,
        "respawn": args.respawn,
        "expansions": args.expansions,
        "delay_ms": args.delay_ms,
        "seed": args.seed,
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "spans_made": made,
        "spans_received": receiver.spans,
        "summary": summarise(turns, modes, args.seed, generations),
        "generations": generations,
        "turns": turns,
    }


EXIT_MODES = ("off", "otlp", "detach")


def exit_turn(mode: str, args: argparse.Namespace, receiver: Receiver) -> dict[str, float]:
    """One fresh process in `mode` (`detach`: otlp with GUARDSEARCH_OTEL_DETACH=1):
    the seconds from its start to its exit, its search's, and the spans it sent (once
    they have all come: a detached export process ends after the run's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "GUARDSEARCH_OTEL"))}
    env["PYTHONPATH"] = str(args.src)
    if mode != "off":
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.url
    if mode == "detach":
        env["GUARDSEARCH_OTEL_DETACH"] = "1"
    command = [sys.executable, __file__, "--once", "--expansions", str(args.expansions)]
    command += ["--delay-ms", str(args.delay_ms)]
    before = receiver.spans
    with open(os.devnull, "w") as quiet:  # a detached export process keeps stderr open
        started = time.perf_counter()
        done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=quiet, text=True)
        wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"the {mode} program failed (exit {done.returncode})")
    settled, count = time.monotonic(), receiver.spans
    while mode == "detach" and time.monotonic() - settled < 2.0:  # until no span came for 2 s
        time.sleep(0.1)
        if receiver.spans != count:
            settled, count = time.monotonic(), receiver.spans
    return {"process": wall, "search": json.loads(done.stdout)["search"], "spans": count - before}


def measure_exits(args: argparse.Namespace) -> dict[str, Any]:
    """`--exits` rounds of one program per mode, in a shuffled order each round."""
    receiver = Receiver()
    turns: dict[str, list[dict[str, float]]] = {m: [] for m in EXIT_MODES}
    shuffle = random.Random(args.seed).shuffle
    for _ in range(args.exits):
        order = list(EXIT_MODES)
        shuffle(order)
        for mode in order:
            turns[mode].append(exit_turn(mode, args, receiver))
    spans = {m: sorted({t["spans"] for t in turns[m]}) for m in ("otlp", "detach")}
    if len(spans["otlp"]) != 1 or spans["detach"] != spans["otlp"]:
        raise SystemExit(f"spans received per program differ: {spans}")
    out: dict[str, Any] = {"rounds": args.exits, "spans_per_program": spans["otlp"][0]}
    for mode in EXIT_MODES:
        for key in ("process", "search"):
            values = [t[key] for t in turns[mode]]
            out[f"{mode}/{key}"] = {
                "median": round(statistics.median(values), 3),
                "best": round(min(values), 3),
            }
    for mode in ("otlp", "detach"):
        ratios = [
            on["process"] / off["process"]
            for on, off in zip(turns[mode], turns["off"], strict=True)
        ]
        mean, low, high = geometric_ci(ratios, args.seed)
        out[f"{mode} vs off/process"] = {"mean": mean, "ci95": [low, high]}
    out["turns"] = turns
    return out


# --- statistics -----------------------------------------------------------------------


def geometric_ci(
    ratios: list[float], seed: int, groups: list[int] | None = None
) -> tuple[float, float, float]:
    """The geometric mean of `ratios` and its 95 % percentile-bootstrap interval, each
    as a percentage change; the bootstrap resamples the rounds, or with `groups` (each
    round's worker generation) whole generations, so that the interval also holds the
    differences between one process and the next."""
    logs = [math.log(r) for r in ratios]
    clusters: dict[int, list[float]] = {}
    for i, value in enumerate(logs):
        clusters.setdefault(groups[i] if groups else i, []).append(value)
    blocks = list(clusters.values())
    draw = random.Random(seed).choices

    def resampled() -> float:
        picked = draw(blocks, k=len(blocks))
        return statistics.fmean(v for block in picked for v in block)

    means = sorted(resampled() for _ in range(BOOTSTRAP))
    low, high = means[int(0.025 * BOOTSTRAP)], means[int(0.975 * BOOTSTRAP) - 1]
    return tuple(round(100 * (math.exp(x) - 1), 1) for x in (statistics.fmean(logs), low, high))  # type: ignore[return-value]


def summarise(
    turns: dict[str, dict[str, list[dict[str, float]]]],
    modes: list[str],
    seed: int,
    generations: list[int] | None = None,
) -> dict[str, Any]:
    """Per mode and strategy: each measure's median and best; against the reference of
    the same round (`off`; `off` against `base`): the paired ratios' geometric mean, its
    95 % interval, their median and range."""
    out: dict[str, Any] = {}
    pairs = [(m, "off") for m in modes if m in ON_MODES]
    pairs += [("off", "base")] if "base" in modes else []
    for strategy in STRATEGIES:
        for mode in modes:
            rows = turns[mode][strategy]
            for key in rows[0]:
                values = [r[key] for r in rows]
                out[f"{mode}/{strategy}/{key}"] = {
                    "median": round(statistics.median(values), 1),
                    "best": min(values),
                }
        for mode, ref in pairs:
            for key in turns[mode][strategy][0]:
                base_key = "search" if key in ("search", "with_export") else "cpu"
                ratios = [
                    on[key] / off[base_key]
                    for on, off in zip(turns[mode][strategy], turns[ref][strategy], strict=True)
                ]
                mean, low, high = geometric_ci(ratios, seed, generations)
                pcts = sorted(round(100 * (r - 1), 1) for r in ratios)
                out[f"{mode} vs {ref}/{strategy}/{key}"] = {
                    "mean": mean,
                    "ci95": [low, high],
                    "median": round(statistics.median(pcts), 1),
                    "range": [pcts[0], pcts[-1]],
                }
    return out


# --- the report -----------------------------------------------------------------------

LABELS = {
    "search": "the search, wall",
    "cpu": "the search, CPU of the run's process",
    "with_export": "the search + flushing every span to the receiver, wall",
    "cpu_run": "CPU of the run's process, search + flush (the encoding included)",
    "cpu_all": "CPU of every process (the export process included)",
}


def markdown(report: dict[str, Any]) -> str:
    """The tables of otel_overhead.md, from a `--json` report."""
    summary = report["summary"]
    load = report["load_avg"]
    load = load if isinstance(load, list) else [load]
    out = [
        f"{report['rounds']} rounds × 2 strategies of paired turns, "
        f"{report['expansions']:,} expansions a turn, model delay {report['delay_ms']} ms; "
        f"load average {' / '.join(f'{x:.2f}' for x in load)} (1 / 5 / 15 min) at the end; "
        f"spans made {report['spans_made']:,}, received {report['spans_received']:,}.",
        "",
        "| against the same round's turn | geometric mean [95 % interval] | median (range) |",
        "|---|---|---|",
    ]
    for key, row in summary.items():
        if " vs " not in key:
            continue
        name, measure = key.rsplit("/", 1)
        out.append(
            f"| {name}: {LABELS[measure]} | **{row['mean']:+.1f} %** "
            f"[{row['ci95'][0]:+.1f}, {row['ci95'][1]:+.1f}] "
            f"| {row['median']:+.1f} % ({row['range'][0]:+.1f} .. {row['range'][1]:+.1f}) |"
        )
    modes = [m for m in ("base", "off", "otlp", "inproc") if f"{m}/bfs/search" in summary]
    out += ["", "| µs per expansion, median (best) | " + " | ".join(modes) + " |"]
    out.append("|---" * (len(modes) + 1) + "|")
    for strategy in STRATEGIES:
        for measure in MEASURES:
            cells = [summary.get(f"{m}/{strategy}/{measure}") for m in modes]
            if all(c is None for c in cells):
                continue
            text = [f"{c['median']:,.0f} ({c['best']:,.0f})" if c else "—" for c in cells]
            out.append(f"| {strategy}: {LABELS[measure]} | " + " | ".join(text) + " |")
    if "exits" in report:
        out += ["", *exits_markdown(report["exits"], report["expansions"])]
    return "\n".join(out)


def exits_markdown(exits: dict[str, Any], expansions: int) -> list[str]:
    """The table of `--exits`: a program that runs one search and exits."""
    out = [
        f"A program that runs one bfs search of {expansions:,} expansions and exits, "
        f"{exits['rounds']} rounds of one fresh process per mode (shuffled), "
        f"{exits['spans_per_program']:,} spans each, every one received:",
        "",
        "| seconds, median (best) | start to exit | the search | start to exit vs off, "
        "geometric mean [95 % interval] |",
        "|---|---|---|---|",
    ]
    names = {"off": "off", "otlp": "otlp (waits for the export)", "detach": "otlp, detached"}
    for mode in EXIT_MODES:
        process, search = exits[f"{mode}/process"], exits[f"{mode}/search"]
        against = exits.get(f"{mode} vs off/process")
        cell = (
            f"{against['mean']:+.1f} % [{against['ci95'][0]:+.1f}, {against['ci95'][1]:+.1f}]"
            if against
            else "—"
        )
        out.append(
            f"| {names[mode]} | {process['median']:.2f} ({process['best']:.2f}) "
            f"| {search['median']:.2f} ({search['best']:.2f}) | {cell} |"
        )
    return out


# --- a tree without tracing, for `base` -----------------------------------------------

_EMIT_BEFORE = """    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._events: list[Event] = []
        self._subscribers: list[Subscriber] = []
        self._clock = clock
        self.record_content = False

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    def emit(self, kind: EventKind, *, step: str = "", node: str = "", **data: Any) -> Event:
        event = Event(
            seq=len(self._events), kind=kind, at=self._clock(), step=step, node=node, data=data
        )
        self._events.append(event)
        for subscriber in self._subscribers:
            subscriber(event)
        return event
"""


def make_base(target: Path) -> None:
    """Write to `target` this tree's `src` without what tracing added to the path every
    run takes: `import guardsearch` does not read the environment for an endpoint, a
    Trace has no observers and delivers each event straight to its subscribers (as
    before the OpenTelemetry view), and a model call's events say only which model
    answered (not the provider, temperature, max tokens, seed and JSON flag the spans
    read)."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(SRC, target, ignore=shutil.ignore_patterns("__pycache__"))
    package = target / "guardsearch"
    init = package / "__init__.py"
    text = init.read_text()
    text = text.replace("from guardsearch.otel import enable_from_env\n", "")
    init.write_text(re.sub(r"\nenable_from_env\(\)\n", "\n", text, count=1))
    events = package / "core" / "events.py"
    text = events.read_text()
    start = text.index("    def __init__(self, clock")
    end = text.index("\n    @property\n    def events", start) + 1  # emit is the last before it
    events.write_text(text[:start] + _EMIT_BEFORE + "\n" + text[end:])
    metered = package / "models" / "metered.py"
    text = metered.read_text()
    asked = re.search(r"        asked = \{\n(.*?)\n        \}\n", text, re.S)
    if asked is None:
        raise SystemExit("models/metered.py: no `asked = {...}` to cut down")
    text = text.replace(asked.group(0), '        asked = {"model": answering.name}\n')
    metered.write_text(text)
    if "enable_from_env()" in init.read_text() or "observer(self)" in events.read_text():
        raise SystemExit(f"{target}: the tracing hooks are still there")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
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
    parser.add_argument("--seed", type=int, default=1, help="turn order and bootstrap")
    parser.add_argument(
        "--respawn", type=int, default=4, help="fresh workers every N rounds (default 4)"
    )
    parser.add_argument(
        "--exits", type=int, default=0, help="also N rounds of programs that search and exit"
    )
    parser.add_argument("--once", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--markdown", type=Path, default=None, help="print the tables of a --json report"
    )
    parser.add_argument("--make-base", type=Path, default=None, help="write a base tree")
    args = parser.parse_args()
    if args.markdown:
        print(markdown(json.loads(args.markdown.read_text())))
        return
    if args.make_base:
        make_base(args.make_base)
        return
    if args.worker:
        worker(args.expansions, args.delay_ms)
        return
    if args.once:
        once(args.expansions, args.delay_ms)
        return
    report = measure(args) if args.rounds else {"expansions": args.expansions}
    if args.exits:
        report["exits"] = measure_exits(args)
    if not args.rounds:
        print(
            json.dumps(report, indent=1)
            if args.json
            else "\n".join(exits_markdown(report["exits"], args.expansions))
        )
        return
    print(json.dumps(report, indent=1) if args.json else markdown(report))


if __name__ == "__main__":
    main()
