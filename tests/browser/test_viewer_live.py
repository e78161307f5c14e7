"""The run viewer in a real browser: headless Chromium (Debian's, scripts/chromium.sh)
driven by Playwright, against `guardsearch serve` on 127.0.0.1.

One server and one browser serve the whole module. Durable runs are started the way a
person starts them, with the CLI in another process (`guardsearch runs start`), on a
scripted model that answers slowly (`scripted:FILE?delay=S`): the page must follow
them through the store. Every page checks that it logged no console error.

`GUARDSEARCH_SCREENSHOTS=DIR` keeps the screenshots the tests take in DIR
(docs/img holds the ones shown in docs/viewer.md and the README).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, sync_playwright

from guardsearch.store.open import open_store

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
KEY = "browser-test-key"
CLI = [sys.executable, "-c", "from guardsearch.cli import main; main()"]
GAME = json.dumps({"numbers": "4 5 6 10"})
# The proposer's answers in order (then the last again): a win in three steps, and one
# step the guard rejects ("7 is not among the numbers left").
WINNING = [
    '{"steps": ["5 * 6", "4 + 5", "7 + 3"]}',
    '{"steps": ["30 - 10"]}',
    '{"steps": ["4 + 20"]}',
]
TIMEOUT_MS = 20_000


def chromium_or_skip() -> str:
    """Chromium's path, installed with apt-get when missing; skipped only when it cannot
    be installed (no root, no apt-get)."""
    try:
        found = subprocess.run(
            ["bash", str(ROOT / "scripts" / "chromium.sh")],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"Chromium is not installed and cannot be: {exc}")
    if found.returncode != 0:
        pytest.skip(f"Chromium is not installed and cannot be: {found.stderr.strip()[-300:]}")
    return found.stdout.strip().splitlines()[-1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Served:
    url: str
    db: Path
    folder: Path
    env: dict[str, str]
    log: Path
    started: list[subprocess.Popen[str]] = field(default_factory=list)

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*CLI, *args, "--store", str(self.db)],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def start(self, *args: str) -> subprocess.Popen[str]:
        """A CLI command left running (a live run)."""
        process = subprocess.Popen(
            [*CLI, *args, "--store", str(self.db)],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.started.append(process)
        return process

    def answers(self, name: str, answers: list[str]) -> Path:
        path = self.folder / name
        path.write_text(json.dumps(answers))
        return path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("viewer")
    port = free_port()
    paths = [str(ROOT / "src"), str(HERE), os.environ.get("PYTHONPATH", "")]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
        "GUARDSEARCH_HOME": str(folder),
        # The page watches runs the CLI starts too: runs without a key belong to no
        # tenant, and only the admin key sees those (docs/security.md, tenancy).
        "GUARDSEARCH_ADMIN_KEY": KEY,
    }
    db = folder / "runs.db"
    served_answers = folder / "served.json"  # the served model: runs started on the page
    served_answers.write_text(json.dumps(WINNING))
    command = [*CLI, "serve", "--host", "127.0.0.1", "--port", str(port), "--store", str(db)]
    command += ["--api-key", KEY, "--log-level", "warning"]
    command += ["--model", f"scripted:{served_answers}"]
    # The server's log goes to a file (a pipe nobody reads would fill and stall it),
    # shown by `server_log` when a test fails.
    log = folder / "server.log"
    with log.open("w") as sink:
        server = subprocess.Popen(command, env=env, stderr=sink, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2):
                break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                server.communicate()
                pytest.fail(f"guardsearch serve did not start: {log.read_text()[-2000:]}")
            time.sleep(0.2)
    served = Served(url=url, db=db, folder=folder, env=env, log=log)
    try:
        yield served
    finally:
        for process in [*served.started, server]:
            if process.poll() is None:
                process.terminate()
            try:
                process.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()


@pytest.fixture(autouse=True)
def server_log(served: Served) -> Iterator[None]:
    """What the server logged during the test, printed (pytest shows it when the test
    fails: a 500's traceback is there)."""
    start = served.log.stat().st_size
    yield
    with served.log.open() as logged:
        logged.seek(start)
        told = logged.read()
    if told:
        print(f"-- guardsearch serve logged --\n{told}")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = chromium_or_skip()
    with sync_playwright() as playwright:
        # Chromium's sandbox needs user namespaces, which a root CI container lacks.
        args = ["--no-sandbox"] if os.geteuid() == 0 else []
        launched = playwright.chromium.launch(executable_path=executable, args=args)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh tab (its own session storage) that must log no console error."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    tab = context.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []

    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            errors.append(f"{tab.url}: {message.text}")

    tab.on("console", console)
    tab.on("pageerror", lambda exc: errors.append(f"{tab.url}: {exc}"))
    yield tab
    context.close()
    assert errors == [], "console errors:\n" + "\n".join(errors)


def open_ui(page: Page, served: Served, where: str = "") -> None:
    """Open /ui, give the API key once, land on `where` (a hash route)."""
    page.goto(f"{served.url}/ui{where}")
    page.fill("#api-key", KEY)
    page.click("text=Use key")
    assert KEY not in page.url


def screenshot(page: Page, name: str) -> None:
    folder = os.environ.get("GUARDSEARCH_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / name), full_page=False)


def wait_status(page: Page, run_id: str, status: str, timeout_ms: int = TIMEOUT_MS) -> None:
    page.wait_for_selector(f'tr[data-run="{run_id}"][data-status="{status}"]', timeout=timeout_ms)


def run_ids(served: Served) -> set[str]:
    """The runs in the store now (read directly: a CLI call takes a second to start)."""
    store = open_store(str(served.db), read_only=True)
    try:
        return {r.id for r in store.list_runs()}
    finally:
        store.close()


def started_run(served: Served, before: set[str]) -> str:
    """The id of the run a CLI process just created (not among `before`)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        new = run_ids(served) - before
        if new:
            return new.pop()
        time.sleep(0.2)
    raise AssertionError("no run was created")


# -- the tests ------------------------------------------------------------------------------


def test_the_page_asks_for_the_key_once_and_the_data_needs_it(page: Page, served: Served) -> None:
    page.goto(f"{served.url}/ui")
    assert page.locator("#api-key").is_visible()
    with urllib.request.urlopen(f"{served.url}/ui", timeout=5) as answer:
        assert answer.status == 200  # the page itself holds no data
    request = urllib.request.Request(f"{served.url}/ui/api/runs")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=5)
    assert refused.value.code == 401
    refused.value.close()
    page.fill("#api-key", KEY)
    page.click("text=Use key")
    page.wait_for_selector("#runs")
    assert page.evaluate("sessionStorage.getItem('guardsearch.apiKey')") == KEY
    page.reload()  # the same tab keeps the key: no second prompt
    page.wait_for_selector("#runs")
    assert page.locator("#api-key").count() == 0


def test_a_run_grows_live_and_a_node_shows_its_guard_feedback(page: Page, served: Served) -> None:
    open_ui(page, served)
    page.wait_for_selector("#runs")
    slow = served.answers("winning.json", WINNING)
    before = run_ids(served)
    cli = served.start(
        "runs", "start", "game24", GAME, "--strategy", "astar",
        "--model", f"scripted:{slow}?delay=2", "--name", "live astar", "--quiet", "--json",
    )  # fmt: skip
    run_id = started_run(served, before)
    # The new run appears in the list without a reload; open it while it runs.
    page.evaluate("window.__same_page = true")
    page.click(f'tr[data-run="{run_id}"] a')
    page.wait_for_selector("g.node")
    seen = [page.locator("g.node").count()]
    deadline = time.monotonic() + 30
    while page.locator("g.node.goal").count() == 0 and time.monotonic() < deadline:
        page.wait_for_timeout(100)
        seen.append(page.locator("g.node").count())
    assert page.locator("g.node.goal").count() == 1, seen
    assert cli.wait(timeout=30) == 0
    page.wait_for_selector("#run-head .badge.succeeded")
    stored = json.loads(served.cli("runs", "export", run_id).stdout)["state"]["nodes"]
    page.wait_for_function(f"document.querySelectorAll('g.node').length === {len(stored)}")
    assert seen[0] < seen[-1], f"nodes did not appear live: {seen}"
    assert len(set(seen)) >= 3, f"nodes did not appear one expansion at a time: {seen}"
    assert page.evaluate("window.__same_page") is True  # updated in place, never reloaded
    assert page.locator("g.node.path").count() == 4  # root and three steps to 24
    # A rejected step: its verdict, score and the guard's feedback.
    page.locator("g.node.failed").first.click()
    details = page.locator("#node-details")
    details.locator(".verdict.fail").first.wait_for()
    assert "game24" in details.inner_text()
    feedback = details.locator(".feedback").first.inner_text()
    assert "7 is not among the numbers left" in feedback, feedback
    # Its prompt comes from the store's paid calls.
    details.locator("details.call summary").first.click()
    assert "Input: " in details.locator("details.call").first.inner_text()
    # The winning node, reached with the keyboard alone.
    page.locator("g.node.root").focus()
    page.keyboard.press("ArrowDown")
    details.locator("h2", has_text="Node n1").wait_for()
    page.keyboard.press("ArrowRight")
    details.locator("h2", has_text="Node n2").wait_for()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Enter")  # the key goes to the node the arrows reached
    details.locator("h2", has_text="Node n1").wait_for()
    assert page.evaluate("document.activeElement.dataset.id") == "n1"
    page.locator("g.node.goal").click()
    assert "game24-final" in details.inner_text()
    screenshot(page, "viewer-run.png")


def test_a_paused_run_is_answered_and_a_running_one_cancelled(page: Page, served: Served) -> None:
    asking = served.answers("asking.json", ["analysis done, deploy to production at 10:00"])
    paused = served.cli(
        "runs", "start", "viewer_apps:asking_app", "{}", "--strategy", "dfs",
        "--model", f"scripted:{asking}", "--name", "needs a person", "--quiet", "--json",
    )  # fmt: skip
    assert paused.returncode == 3, paused.stderr
    paused_id = json.loads(paused.stdout)["id"]
    # 5 s a call: still running however long answering the other run takes here
    endless = served.answers("endless.json", ['{"steps": ["4 + 5"]}'])
    before = run_ids(served)
    running = served.start(
        "runs", "start", "game24", GAME, "--strategy", "dfs",
        "--model", f"scripted:{endless}?delay=5", "--name", "to cancel", "--quiet", "--json",
    )  # fmt: skip
    running_id = started_run(served, before)
    open_ui(page, served)
    wait_status(page, running_id, "running")
    row = page.locator(f'tr[data-run="{paused_id}"]')
    assert "Deploy release 2.1 to production now?" in row.inner_text()
    screenshot(page, "viewer-runs.png")
    # Answer with the keyboard: the field, then Enter.
    row.locator("input").fill("yes, go ahead")
    row.locator("input").press("Enter")
    wait_status(page, paused_id, "succeeded")
    shown = json.loads(served.cli("runs", "show", paused_id, "--json").stdout)
    assert shown["status"] == "succeeded" and shown["sessions"] == 2
    page.locator(f'tr[data-run="{running_id}"] button', has_text="Cancel").click()
    wait_status(page, running_id, "cancelled")
    assert running.wait(timeout=30) != 0
    # Filters: only the cancelled run, then only game24.
    page.select_option("#filter-status", "cancelled")
    assert page.locator("#runs tbody tr").count() == 1
    page.select_option("#filter-status", "")
    page.select_option("#filter-app", "viewer_apps:asking_app")
    assert page.locator("#runs tbody tr").count() == 1
    # A narrow window: each run becomes a card, every value within the window.
    page.set_viewport_size({"width": 400, "height": 800})
    cells = page.locator(f'tr[data-run="{paused_id}"] td')
    for at in range(cells.count()):
        box = cells.nth(at).bounding_box()
        assert box is not None and box["x"] + box["width"] <= 400, cells.nth(at).inner_text()


def test_a_run_started_on_the_page_and_two_runs_compared(page: Page, served: Served) -> None:
    answers = served.answers("fast.json", WINNING)
    done = served.cli(
        "runs", "start", "game24", GAME, "--strategy", "astar",
        "--model", f"scripted:{answers}", "--name", "compare astar", "--quiet", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    ids = [json.loads(done.stdout)["id"]]
    # The second run starts from the page, on the served model, and opens as it runs.
    open_ui(page, served)
    page.click("#start summary")
    page.select_option("#start-app", "game24")
    assert json.loads(page.input_value("#start-problem")) == {"numbers": "4 5 6 10"}
    page.fill("#start-strategy", "bfs")
    page.click("#start-go")
    page.wait_for_url("**/ui#/run/*")
    page.wait_for_selector("#run-head .badge.succeeded")
    ids.append(page.url.rsplit("/", 1)[1])
    assert "game24 / bfs" in page.locator("#run-summary").inner_text()
    page.click("a.brand")
    page.wait_for_selector(f'tr[data-run="{ids[1]}"]')
    page.select_option("#compare-a", ids[0])
    page.select_option("#compare-b", ids[1])
    page.click("#compare-go")
    page.wait_for_selector("#compare-table table")
    page.wait_for_selector(".compare svg g.node")
    table = page.locator("#compare-table").inner_text()
    assert "astar" in table and "bfs" in table and "calls" in table and "depth" in table
    assert "strategy" in page.locator("#compare-table tr.diff").first.inner_text()
    assert "Where they diverged" in page.locator("#divergence").inner_text()
    assert page.locator(".compare .treebox").count() == 2
    screenshot(page, "viewer-compare.png")


def test_runs_view_writes_one_page_that_works_offline(page: Page, served: Served) -> None:
    run_id = json.loads(served.cli("runs", "list", "--json").stdout)[-1]["id"]
    target = served.folder / "one.html"
    made = served.cli("runs", "view", run_id, "--out", str(target))
    assert made.returncode == 0, made.stderr
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(target.as_uri())
    page.wait_for_selector("g.node")
    page.locator("g.node").last.click()
    assert "Node " in page.locator("#node-details").inner_text()
    assert [u for u in asked if not u.startswith("file:")] == []  # nothing fetched


def test_a_bench_trial_grows_live(page: Page, served: Served) -> None:
    """`bench --store`: the trial is a running run whose tree the page follows."""
    open_ui(page, served)
    page.wait_for_selector("#runs")
    slow = served.answers("bench.json", WINNING)
    before = run_ids(served)
    bench = served.start(
        "bench", "game24", "--range", "0:1", "--methods", "astar", "--budget-calls", "4",
        "--model", f"scripted:{slow}?delay=1", "--out", str(served.folder / "bench"),
        "--quiet", "--json",
    )  # fmt: skip
    run_id = started_run(served, before)
    page.click(f'tr[data-run="{run_id}"] a')
    page.wait_for_selector("#run-head .badge.running")
    page.wait_for_function("document.querySelectorAll('g.node').length >= 2")
    store = open_store(str(served.db), read_only=True)
    try:
        assert store.get_run(run_id).status == "running"  # nodes came while it ran
    finally:
        store.close()
    assert bench.wait(timeout=60) == 0, bench.stderr.read() if bench.stderr else ""
    page.wait_for_selector("#run-head .badge.succeeded, #run-head .badge.failed")
