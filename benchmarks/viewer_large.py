"""The run viewer on a 10,000-node run: time to first paint and to interactive in
headless Chromium, for the one-file page (`runs view`) and the live page (`serve`, /ui).

    python3 benchmarks/viewer_large.py [--nodes 10000] [--runs 3] [--json]

A real durable run makes the tree: BFS over a wide synthetic space (10 children per
node, every ninth rejected by its guard with feedback), on a zero-latency scripted
model, written to a SQLite run store exactly as any durable run is. Then, per page and
per repetition, a fresh browser tab opens it and reports (ms from navigation start):

- first paint: the browser's first-contentful-paint;
- tree drawn: the viewer's `gs-tree-drawn` mark (the run's data parsed, the tree laid
  out and drawn; for the live page this includes the server reading the run and
  streaming its snapshot);
- interactive: a click on a node issued the moment the tree is drawn, answered (the
  node's details on screen);
and, once loaded: a click-to-details latency, "Unfold all" (all 10,000 nodes laid
out, those in sight drawn), one pan step with everything unfolded, and "Fit" with
everything unfolded (zoomed out to its 2% limit: the most nodes in sight).

Chromium is Debian's (scripts/chromium.sh installs it), driven by Playwright.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from guardsearch.core.context import Context
from guardsearch.core.guard_result import GuardResult
from guardsearch.core.messages import Message, ModelRequest
from guardsearch.models.scripted import ScriptedModel
from guardsearch.registry import AppSetup
from guardsearch.runs import RunSpec, create_run, execute_run
from guardsearch.search import BaseSpace, Node, Proposal, Root
from guardsearch.store.open import open_store
from guardsearch.viewer.export import export_doc
from guardsearch.viewer.page import render_run

ROOT = Path(__file__).resolve().parents[1]
CHILDREN = 10
CLI = [sys.executable, "-c", "from guardsearch.cli import main; main()"]


@dataclass(kw_only=True)
class WideSpace(BaseSpace):
    """States are numbers; n's children are 10n+1 .. 10n+10; every ninth is rejected."""

    def root(self) -> Root:
        return Root(state=0, context=Context(objective="Draw a wide tree"))

    def request(
        self, node: Node, context: Context, *, seed: int, temperature: float
    ) -> ModelRequest:
        return ModelRequest(
            messages=(Message("system", context.render()), Message("user", str(node.state))),
            seed=seed,
            temperature=temperature,
            max_tokens=64,
        )

    def parse(self, node: Node, text: str) -> list[Proposal]:
        return [Proposal(state=int(t), text=f"step to {t}", value=int(t)) for t in text.split()]

    def key(self, node: Node, proposal: Proposal) -> str:
        return str(proposal.state)

    async def evaluate(self, node: Node, proposal: Proposal, context: Context) -> GuardResult:
        n = int(proposal.state)
        if n % 9 == 0:
            return GuardResult.fail(f"{n} is a multiple of nine", "wide", score=0.0)
        return GuardResult.ok("wide", score=1.0 / (1 + n % 7))


def wide_app(problem: dict[str, Any], strategy: str) -> AppSetup:
    return AppSetup(space=WideSpace())


def _propose(request: ModelRequest) -> str:
    n = int(request.messages[-1].content)
    return " ".join(str(n * CHILDREN + i) for i in range(1, CHILDREN + 1))


def make_run(db: Path, nodes: int) -> str:
    store = open_store(str(db))
    expansions = (nodes + CHILDREN - 2) // CHILDREN
    spec = RunSpec(
        app="viewer_large:wide_app",
        problem={},
        strategy="bfs",
        model="scripted",
        options={"max_expansions": expansions},
        name=f"{nodes} nodes",
    )
    run = create_run(spec, store)
    asyncio.run(execute_run(run.id, store, model=ScriptedModel(_propose)))
    store.close()
    return run.id


MEASURE = """async () => {
  const nav = performance.getEntriesByType("navigation")[0];
  const fcp = performance.getEntriesByName("first-contentful-paint")[0];
  const drawn = performance.getEntriesByName("gs-tree-drawn")[0];
  return { fcp: fcp ? fcp.startTime : null, drawn: drawn ? drawn.startTime : null,
           nodes: document.querySelectorAll("g.node").length, start: nav ? nav.startTime : 0 };
}"""


def in_sight(page: Any, nth: int) -> str:
    """The id of the nth node (not the root) drawn inside the tree's box."""
    return str(
        page.evaluate(
            """(nth) => {
              const box = document.querySelector(".treebox svg").getBoundingClientRect();
              const inside = [...document.querySelectorAll("g.node:not(.root)")].filter((g) => {
                const r = g.getBoundingClientRect();
                return r.left >= box.left && r.right <= box.right && r.top >= box.top
                  && r.bottom <= box.bottom; });
              return inside[Math.min(nth, inside.length - 1)].dataset.id; }""",
            nth,
        )
    )


def measure_page(browser: Any, url: str, key: str | None) -> dict[str, float]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    if key:
        context.add_init_script(f"sessionStorage.setItem('guardsearch.apiKey', {json.dumps(key)})")
    page = context.new_page()
    page.set_default_timeout(120_000)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(url)
    # The first click goes in the moment the tree is there: answered = interactive.
    page.wait_for_selector("g.node:not(.root)")
    page.locator(f'g.node[data-id="{in_sight(page, 1)}"]').click()
    page.wait_for_selector("#node-details h2")
    interactive = page.evaluate("performance.now()")
    marks = page.evaluate(MEASURE)
    started = time.perf_counter()
    page.locator(f'g.node[data-id="{in_sight(page, 4)}"]').click()
    page.wait_for_function("document.querySelector('#node-details h2') !== null")
    click_ms = 1000 * (time.perf_counter() - started)
    unfold = page.evaluate(
        """() => { const t0 = performance.now();
          const buttons = [...document.querySelectorAll("button")];
          buttons.find((b) => b.textContent === "Unfold all").click();
          return new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() =>
            done({ ms: performance.now() - t0, drawn: document.querySelectorAll("g.node").length,
                   note: document.querySelector(".tree-note").textContent })))); }"""
    )
    box = page.locator(".treebox svg").bounding_box()
    assert box is not None
    started = time.perf_counter()
    page.mouse.move(box["x"] + 200, box["y"] + 200)
    page.mouse.down()
    page.mouse.move(box["x"] + 500, box["y"] + 260, steps=1)
    page.mouse.up()
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done(0)))")
    pan_ms = 1000 * (time.perf_counter() - started)
    # Everything unfolded, zoomed out as far as Fit goes (the most nodes in sight).
    fit_all = page.evaluate(
        """() => { const t0 = performance.now();
          const buttons = [...document.querySelectorAll("button")];
          buttons.find((b) => b.textContent === "Fit").click();
          return new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() =>
            done({ ms: performance.now() - t0,
                   drawn: document.querySelectorAll("g.node").length })))); }"""
    )
    context.close()
    if errors:
        raise SystemExit(f"console errors on {url}: {errors}")
    return {
        "first_paint_ms": round(marks["fcp"], 1),
        "tree_drawn_ms": round(marks["drawn"], 1),
        "interactive_ms": round(interactive, 1),
        "drawn_nodes_at_load": marks["nodes"],
        "click_to_details_ms": round(click_ms, 1),
        "unfold_all_ms": round(unfold["ms"], 1),
        "unfolded_note": unfold["note"],
        "pan_step_ms": round(pan_ms, 1),
        "fit_all_ms": round(fit_all["ms"], 1),
        "drawn_nodes_fit_all": fit_all["drawn"],
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def summary(samples: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in samples[0].items():
        if isinstance(value, int | float):
            out[name] = round(statistics.median(s[name] for s in samples), 1)
        else:
            out[name] = value
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3, help="repetitions per page (median)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = subprocess.run(
        ["bash", str(ROOT / "scripts" / "chromium.sh")], capture_output=True, text=True, check=True
    ).stdout.split()[-1]
    folder = Path(tempfile.mkdtemp(prefix="viewer-large-"))
    db = folder / "runs.db"
    started = time.perf_counter()
    run_id = make_run(db, args.nodes)
    made_s = time.perf_counter() - started
    store = open_store(str(db), read_only=True)
    doc = export_doc(store, run_id)
    store.close()
    page = folder / "large.html"
    started = time.perf_counter()
    page.write_text(render_run(doc), "utf-8")
    render_s = time.perf_counter() - started

    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "benchmarks")]),
    }
    server = subprocess.Popen(
        [*CLI, "serve", "--port", str(port), "--store", str(db), "--log-level", "warning"],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                    break
            except OSError:
                time.sleep(0.2)
        with sync_playwright() as playwright:
            launch_args = ["--no-sandbox"] if os.geteuid() == 0 else []
            browser = playwright.chromium.launch(executable_path=chromium, args=launch_args)
            one_file = [measure_page(browser, page.as_uri(), None) for _ in range(args.runs)]
            live_url = f"http://127.0.0.1:{port}/ui#/run/{run_id}"
            live = [measure_page(browser, live_url, None) for _ in range(args.runs)]
            version = browser.version
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    result = {
        "nodes": len(doc["state"]["nodes"]),
        "events": len(doc["events"]),
        "page_bytes": page.stat().st_size,
        "make_run_s": round(made_s, 1),
        "render_page_s": round(render_s, 2),
        "chromium": version,
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "runs_per_page": args.runs,
        "one_file_page": summary(one_file),
        "live_page": summary(live),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{result['nodes']} nodes, {result['events']} events; one-file page "
        f"{result['page_bytes'] / 1e6:.1f} MB (rendered in {render_s:.2f}s); "
        f"Chromium {version}, {os.cpu_count()} CPUs; median of {args.runs}"
    )
    print(f"{'':<28}{'one file':>12}{'live /ui':>12}")
    for name in one_file[0]:
        if name == "unfolded_note":
            continue
        print(f"{name:<28}{result['one_file_page'][name]:>12}{result['live_page'][name]:>12}")
    print(f"after unfold all: {result['live_page']['unfolded_note']}")


if __name__ == "__main__":
    main()
